#!/usr/bin/env bash
# Checks that every relative link of the repository's Markdown documents resolves: each
# `[text](path)`, `[text](path#anchor)`, `[text](#anchor)` and `[label]: path` outside code
# names a file or directory that exists, and an anchor names a heading of its document (as
# GitHub makes them: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats).
# Links with a scheme (https:, mailto:) are not followed; a link that leaves the repository
# (the SPEC, beside it) is listed, not checked.
#
#   bash Tests/docs/links.sh            # from anywhere in the repository
#
# Exits 0 when every link resolves, 1 otherwise, naming each file:line.
set -euo pipefail
cd "$(dirname "$0")/../.."

git ls-files -z -- '*.md' | python3 -c '
import os, re, sys, unicodedata

root = os.path.realpath(".")
files = [f for f in sys.stdin.read().split("\0") if f]

def lines_outside_code(path):
    """(number, text) of each line outside fenced code, with inline code spans blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if fence:
                if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                    fence = None
                continue
            if marker:
                fence = marker.group(1)
                continue
            if line.startswith("    ") or line.startswith("\t"):
                continue  # an indented code block (or a list item continued; no links there)
            yield number, re.sub(r"(`+).*?\1", "", line.rstrip("\n"))

def slug(heading):
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")

# Headings keep their code spans (`StopWatchCore` gives stopwatchcore), so they are read apart.
def lines_for_headings(path):
    fence = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            marker = re.match(r"(`{3,}|~{3,})", line.lstrip())
            if fence:
                if marker and marker.group(1)[0] == fence[0]:
                    fence = None
                continue
            if marker:
                fence = marker.group(1)
                continue
            yield number, line.rstrip("\n")
def anchors(path, _cache={}):
    """The anchors of the headings of `path`."""
    if path not in _cache:
        seen, result = {}, set()
        for _, line in lines_for_headings(path):
            heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if heading:
                base = slug(heading.group(1).replace("`", ""))
                count = seen.get(base, 0)
                seen[base] = count + 1
                result.add(base if count == 0 else f"{base}-{count}")
        _cache[path] = result
    return _cache[path]

inline = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
reference = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
failures, links, outside = 0, 0, set()
for path in files:
    directory = os.path.dirname(path)
    for number, line in lines_outside_code(path):
        targets = inline.findall(line)
        ref = reference.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            if not target or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                continue
            links += 1
            file_part, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(directory, file_part)) if file_part else path
            if not os.path.realpath(resolved).startswith(root + os.sep):
                outside.add(f"{target} (from {path})")
                continue
            if not os.path.exists(resolved):
                print(f"FAIL: {path}:{number}: {target}: no such file or directory", file=sys.stderr)
                failures += 1
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                print(f"FAIL: {path}:{number}: {target}: no heading of {resolved} makes the anchor #{anchor}", file=sys.stderr)
                failures += 1

for link in sorted(outside):
    print(f"note: not checked, outside the repository: {link}")
if failures:
    print(f"{failures} broken link(s)", file=sys.stderr)
    sys.exit(1)
print(f"links: {links} relative links in {len(files)} Markdown files, each resolves")
'
