#!/usr/bin/env bash
# Checks the man pages: they render without a single warning (groff -ww, man --warnings,
# mandoc -Tlint where installed), their sources follow the house rules, and they document
# everything the binaries' --help mentions: every long option, every swctl command, every
# exit status, every environment variable, and the version.
#
#   bash Tests/docs/man-pages.sh                  # from the repository root
#   SWCTL=path/to/swctl STOPWATCHD=path/to/stopwatchd bash Tests/docs/man-pages.sh
#   SWCTL_PAGE=x/swctl.1 STOPWATCHD_PAGE=x/stopwatchd.8 bash Tests/docs/man-pages.sh
#
# Exits 0 when every check passes, 1 otherwise, naming each failure.
set -euo pipefail

SWCTL=${SWCTL:-.build/debug/swctl}
STOPWATCHD=${STOPWATCHD:-.build/debug/stopwatchd}
SWCTL_PAGE=${SWCTL_PAGE:-man/swctl.1}
STOPWATCHD_PAGE=${STOPWATCHD_PAGE:-man/stopwatchd.8}

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
pass() {
    echo "ok: $*"
}

for tool in groff; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed" >&2; exit 1; }
done
for page in "$SWCTL_PAGE" "$STOPWATCHD_PAGE"; do
    [[ -f $page ]] || { echo "FAIL: $page is missing (run this from the repository root)" >&2; exit 1; }
done
for binary in "$SWCTL" "$STOPWATCHD"; do
    [[ -x $binary ]] || {
        echo "FAIL: no executable $binary; build it (swift build) or set SWCTL/STOPWATCHD" >&2
        exit 1
    }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs a command with its output discarded; fails if it exits non-zero or prints
# anything on standard error.
must_be_quiet() {
    local label=$1
    shift
    local status=0
    "$@" >/dev/null 2>"$work/stderr" || status=$?
    if [[ $status -ne 0 || -s $work/stderr ]]; then
        fail "$label (exit status $status):"
        sed 's/^/    /' "$work/stderr" >&2
    else
        pass "$label"
    fi
}

# The page as plain text, on lines long enough that nothing wraps (so no option is split
# or hyphenated), with the hyphens and minus signs groff may use for '-' mapped back.
render_text() {
    groff -man -Tutf8 -rLL=2000n -rHY=0 -P-cbou "$1" 2>/dev/null |
        LC_ALL=C sed -e 's/\xe2\x80\x90/-/g' -e 's/\xe2\x80\x91/-/g' -e 's/\xe2\x88\x92/-/g' \
            -e 's/[[:space:]]*$//'
}

# The body of section $2 (a heading such as "EXIT STATUS") of rendered text $1.
section() {
    awk -v heading="$2" '
        /^[A-Z][A-Z ]*[A-Z]$/ { inside = ($0 == heading); next }
        inside { print }
    ' "$1"
}

# Whether an entry (a .TP tag, or the start of a line) in section text $1 begins with $2.
has_entry() {
    local text=$1 word=$2
    grep -qE -- "^[[:space:]]+(-[A-Za-z], )?$(printf '%s' "$word" | sed 's/[.[\*^$]/\\&/g')([^A-Za-z0-9_-]|$)" <<<"$text"
}

for page in "$SWCTL_PAGE" "$STOPWATCHD_PAGE"; do
    # 1. Rendering: not one warning.
    must_be_quiet "$page: groff -man -Tutf8 -ww -z" groff -man -Tutf8 -ww -z "$page"
    if command -v man >/dev/null; then
        must_be_quiet "$page: man --warnings -l" \
            env LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat PAGER=cat man --warnings -E UTF-8 -l "$page"
    else
        echo "skip: $page: man is not installed"
    fi
    if command -v mandoc >/dev/null; then
        must_be_quiet "$page: mandoc -Tlint" mandoc -Tlint "$page"
    else
        echo "skip: $page: mandoc is not installed"
    fi

    # 2. Source rules: roff man macros (no mdoc), no trailing whitespace, no blank lines.
    if grep -qE '^\.(Dd|Dt|Os|Sh|Nm)\b' "$page"; then
        fail "$page: uses mdoc macros; write man(7) macros"
    fi
    if grep -nE '[[:space:]]$' "$page" >"$work/lines"; then
        fail "$page: trailing whitespace on line(s) $(cut -d: -f1 "$work/lines" | paste -sd, -)"
    fi
    if grep -nE '^[[:space:]]*$' "$page" >"$work/lines"; then
        fail "$page: blank line(s) $(cut -d: -f1 "$work/lines" | paste -sd, -); use .PP"
    fi
done

# 3. Completeness against --help.

# expect_entries PAGE_TEXT PAGE SECTION SOURCE WHAT WORDS...: each word has an entry in SECTION.
expect_entries() {
    local text=$1 page=$2 section_name=$3 source=$4 what=$5
    shift 5
    if (($# == 0)); then
        fail "$source lists no $what: cannot check $page"
        return
    fi
    local body word missing=()
    body=$(section "$text" "$section_name")
    for word in "$@"; do
        has_entry "$body" "$word" || missing+=("$word")
    done
    if ((${#missing[@]})); then
        fail "$page: $section_name has no entry for ${missing[*]} (listed by $source)"
    else
        pass "$page: every one of the $what of $source has an entry in $section_name ($*)"
    fi
}

check_page() {
    local page=$1 binary=$2 program
    program=$(basename "$binary")
    local text="$work/$(basename "$page").txt"
    render_text "$page" >"$text"
    local help
    help=$("$binary" --help)

    # shellcheck disable=SC2046  # one word each, by design
    expect_entries "$text" "$page" OPTIONS "$program --help" "long options" \
        $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u || true)
    # shellcheck disable=SC2046
    expect_entries "$text" "$page" ENVIRONMENT "$program --help" "variables" \
        $(grep -oE '\$[A-Z_][A-Z0-9_]*' <<<"$help" | tr -d '$' | sort -u || true)

    local version
    version=$("$binary" --version | awk '{ print $NF }')
    if grep -qE "^stopwatchd ${version//./\\.}[[:space:]]" "$text"; then
        pass "$page: footer names version $version"
    else
        fail "$page: the footer (.TH) does not say \"stopwatchd $version\", which $program --version prints"
    fi
}

check_page "$SWCTL_PAGE" "$SWCTL"
check_page "$STOPWATCHD_PAGE" "$STOPWATCHD"

swctl_help=$("$SWCTL" --help)
swctl_text="$work/$(basename "$SWCTL_PAGE").txt"

# Every command in the "commands:" block of swctl --help has an entry under COMMANDS.
# shellcheck disable=SC2046
expect_entries "$swctl_text" "$SWCTL_PAGE" COMMANDS "swctl --help" "commands" \
    $(awk '/^commands:/ { inside = 1; next } /^[^ ]/ { inside = 0 } inside' <<<"$swctl_help" |
        grep -oE '^  [a-z][a-z-]*' | tr -d ' ' || true)

# Every exit status in swctl --help ("Exit status: 0 done, 1 refused, ...") has an entry
# under EXIT STATUS.
# shellcheck disable=SC2046
expect_entries "$swctl_text" "$SWCTL_PAGE" "EXIT STATUS" "swctl --help" "exit statuses" \
    $(tr '\n' ' ' <<<"$swctl_help" | sed -n 's/.*Exit status:\(.*\)/\1/p' | grep -oE '\b[0-9]+\b' || true)

if ((failures)); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "all man page checks passed"
