#!/usr/bin/env bash
# Checks that the package's public API is the documented one, without building anything:
#
#   (a) `public` (or `open`) appears only in the targets of library products: every other
#       target (LinuxSystem, UserDatabase, Varlink, StopwatchDaemon, the executables,
#       Benchmarks) says `package` for what other targets use;
#   (b) every top-level public type, typealias, function or constant of a product's
#       targets, and every extension with public members of a type not listed, is listed
#       in docs/API.md's "Public API" section, under its product;
#   (c) everything listed there still exists, public, in that product's targets.
#
# That section reads, for each library product of Package.swift:
#
#   ### `StopwatchdClient`
#   - `StopwatchClient`: what it is for.
#   - `extension Duration`: (an extension of a type from elsewhere, with public members)
#
#   bash Tests/api/public-api.sh            # from anywhere in the repository
#
# Exits 0 when the public API matches docs/API.md, 1 otherwise, naming each file:line.
set -euo pipefail
cd "$(dirname "$0")/../.."

readme=docs/API.md
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# Library products and their targets, from Package.swift's `.library(...)` lines (each on
# one line): "Product Target Target...".
products=$(sed -nE 's/^[[:space:]]*\.library\(name: *"([^"]+)", *targets: *\[([^]]*)\].*/\1 \2/p' Package.swift | tr -d '",')
if [ -z "$products" ]; then
    echo "FAIL: no .library(name:targets:) line found in Package.swift" >&2
    exit 1
fi
product_targets=$(echo "$products" | cut -d' ' -f2- | tr ' ' '\n' | sort -u)

# Prints "file:line:text" for each line of Swift source under the given directories, with
# comments and string literals' contents blanked out, so that neither counts as code.
code_lines() {
    find "$@" -name '*.swift' -print0 | sort -z | xargs -0 -r awk '
        FNR == 1 { inBlock = 0; inMulti = 0 }
        {
            line = $0; out = ""; i = 1; n = length(line)
            while (i <= n) {
                c = substr(line, i, 1); two = substr(line, i, 2); three = substr(line, i, 3)
                if (inBlock) { if (two == "*/") { inBlock = 0; i += 2 } else i++; continue }
                if (inMulti) { if (three == "\"\"\"") { inMulti = 0; i += 3 } else i++; continue }
                if (two == "//") break
                if (two == "/*") { inBlock = 1; i += 2; continue }
                if (three == "\"\"\"") { inMulti = 1; i += 3; out = out "\"\""; continue }
                if (c == "\"") {
                    # A one-line string: skipped to its closing quote (escapes included).
                    i++
                    while (i <= n && substr(line, i, 1) != "\"") { if (substr(line, i, 1) == "\\") i++; i++ }
                    i++; out = out "\"\""; continue
                }
                out = out c; i++
            }
            print FILENAME ":" FNR ":" out
        }'
}

# `public`, or `open` as a modifier (not the `open(2)` call).
public_modifier='(public[[:space:]]|open[[:space:]]+(class|func|var|let|subscript|init|override|static|final|dynamic)[[:space:]])'
public_word="(^|[^A-Za-z0-9_.])$public_modifier"

# (a) No `public` outside the products' targets.
other_directories=()
for directory in Sources/*/ Benchmarks/*/; do
    directory=${directory%/}
    target=$(basename "$directory")
    if [ "${directory%%/*}" = Sources ] && echo "$product_targets" | grep -qx "$target"; then
        continue
    fi
    other_directories+=("$directory")
done
while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest%%:*}
    fail "$file:$line: 'public' in $(dirname "${file#*/}" | cut -d/ -f1), a target no library product exposes; say 'package' (or nothing)"
done < <(code_lines "${other_directories[@]}" | grep -E "^[^:]+:[0-9]+:(.*[^A-Za-z0-9_.])?$public_modifier" || true)

# (b) and (c), product by product.
# The names a product declares public, as "name<TAB>file:line": top-level public
# declarations, and top-level extensions with public members (as "extension Type").
declared_names() {
    code_lines "$@" | awk -F: -v publicWord="$public_word" '
        {
            file = $1; line = $2
            text = $0; sub(/^[^:]*:[0-9]+:/, "", text)
        }
        # A top-level declaration starts at column 0; its attributes may come first.
        text ~ /^[^[:space:]}]/ {
            declaration = text
            while (declaration ~ /^@[A-Za-z_]+(\([^)]*\))?[[:space:]]+/) sub(/^@[A-Za-z_]+(\([^)]*\))?[[:space:]]+/, "", declaration)
            extension = ""
            if (declaration ~ /^((public|open)[[:space:]]+)?extension[[:space:]]/) {
                name = declaration
                sub(/^((public|open)[[:space:]]+)?extension[[:space:]]+/, "", name)
                sub(/[^A-Za-z0-9_.].*/, "", name)
                extension = name; extensionAt = file ":" line; extensionReported = 0
                if (declaration ~ /^(public|open)[[:space:]]/) {
                    print "extension " name "\t" extensionAt; extensionReported = 1
                }
                next
            }
            if (declaration ~ /^(public|open)[[:space:]]/) {
                sub(/^(public|open)[[:space:]]+/, "", declaration)
                while (declaration ~ /^(final|indirect|nonisolated|static|mutating|prefix|postfix|infix)[[:space:]]/) sub(/^[a-z]+[[:space:]]+/, "", declaration)
                if (match(declaration, /^(struct|enum|class|protocol|actor|typealias|func|let|var)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*/)) {
                    name = substr(declaration, 1, RLENGTH); sub(/^[a-z]+[[:space:]]+/, "", name)
                    print name "\t" file ":" line
                } else {
                    print "?" declaration "\t" file ":" line
                }
            }
            next
        }
        text ~ /^}/ { extension = ""; next }
        # A public member of a top-level extension makes the extension public API.
        extension != "" && !extensionReported && text ~ publicWord {
            print "extension " extension "\t" extensionAt; extensionReported = 1
        }'
}

# The names docs/API.md lists under product $1: the first `code` of each list item of its
# "### `Product`" subsection of "## Public API", as "name<TAB>docs/API.md:line".
listed_names() {
    awk -v product="$1" -v readme="$readme" '
        /^## / { inSection = ($0 ~ /^## Public API[[:space:]]*$/); inProduct = 0; next }
        inSection && /^### / {
            heading = $0; sub(/^### +/, "", heading); gsub(/`/, "", heading); sub(/[[:space:]]+$/, "", heading)
            inProduct = (heading == product); next
        }
        inSection && inProduct && /^[-*] +`[^`]+`/ {
            name = $0; sub(/^[-*] +`/, "", name); sub(/`.*/, "", name); sub(/<.*/, "", name)
            print name "\t" readme ":" NR
        }' "$readme"
}

if ! grep -q '^## Public API[[:space:]]*$' "$readme"; then
    fail "$readme has no '## Public API' section"
fi
while IFS= read -r heading; do
    [ -n "$heading" ] || continue
    product=${heading#*:}
    if ! echo "$products" | cut -d' ' -f1 | grep -qx "$product"; then
        fail "$readme:${heading%%:*}: '$product' is listed in 'Public API' but is no library product of Package.swift"
    fi
done < <(awk '/^## / { inSection = ($0 ~ /^## Public API[[:space:]]*$/); next }
    inSection && /^### / { h = $0; sub(/^### +/, "", h); gsub(/`/, "", h); sub(/[[:space:]]+$/, "", h); print NR ":" h }' "$readme")

while read -r product targets; do
    failures_before=$failures
    directories=()
    for target in $targets; do
        if [ -d "Sources/$target" ]; then
            directories+=("Sources/$target")
        else
            fail "Package.swift: target $target of product $product is not in Sources/$target (this check knows no other path)"
        fi
    done
    [ ${#directories[@]} -gt 0 ] || continue
    declared=$(declared_names "${directories[@]}")
    listed=$(listed_names "$product")
    declared_types=$(echo "$declared" | cut -f1 | grep -v '^extension ' || true)
    while IFS=$'\t' read -r name location; do
        [ -n "$name" ] || continue
        case "$name" in
        "?"*)
            fail "$location: a public declaration this check cannot read ('${name#?}'); write it as 'public struct Name', 'public func name', …"
            continue
            ;;
        "extension "*)
            # An extension of one of this product's own public types is part of that type.
            if echo "$declared_types" | grep -qx "${name#extension }"; then continue; fi
            ;;
        esac
        if ! echo "$listed" | cut -f1 | grep -qxF "$name"; then
            fail "$location: public '$name' (product $product) is not listed under \`$product\` in $readme's 'Public API' section; list it there with what it is for, or make it package"
        fi
    done <<<"$declared"
    if [ -z "$listed" ]; then
        fail "$readme: no '### \`$product\`' list in the 'Public API' section"
    fi
    while IFS=$'\t' read -r name location; do
        [ -n "$name" ] || continue
        if ! echo "$declared" | cut -f1 | grep -qxF "$name"; then
            fail "$location: '$name' is listed under $product, but no target of $product ($targets) declares it public any more; update the list"
        fi
    done <<<"$listed"
    if [ "$failures" -eq "$failures_before" ]; then
        count=$(echo "$declared" | grep -vc '^$' || true)
        echo "ok: $product: $count public declarations, each listed in $readme"
    fi
done <<<"$products"

if [ "$failures" -gt 0 ]; then
    echo "$failures problem(s) with the public API" >&2
    exit 1
fi
echo "public API: as documented"
