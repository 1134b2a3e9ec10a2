#!/usr/bin/env bash
# Checks that every relative link of the repository's Markdown documents resolves: each
# `[text](path)`, `[text](path#anchor)`, `[text](#anchor)` and `[label]: path` outside code
# (fenced blocks, indented blocks as CommonMark reads them, and code spans; a list item's
# indented continuation is not code) names a file or directory that exists, and an anchor
# names a heading of its document (as GitHub makes them: a link gives its text, lower case,
# punctuation dropped, spaces to hyphens, -1, -2 for repeats).
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

def indentation(line):
    """The columns of white space a line begins with (a tab to the next multiple of 4)."""
    column = 0
    for character in line:
        if character == " ":
            column += 1
        elif character == "\t":
            column += 4 - column % 4
        else:
            break
    return column

list_marker = re.compile(r"([-*+]|\d{1,9}[.)])( +|\t|$)")

def lines_outside_code(path):
    """(number, text) of each line outside code blocks, with inline code spans blanked.

    Code blocks are fenced ones, and indented ones (as CommonMark reads them): 4 columns
    past where the text of the enclosing list item begins (0 outside lists), after a blank
    line or a heading, never in the middle of a paragraph. So a list item continued on an
    indented line, or a nested list, is read for links."""
    fence = None
    items = []        # where the text of each open list item begins, innermost last
    blank = True      # the previous line was blank (or the start of the file)
    paragraph = False # the previous line was text that an indented line would continue
    code = None       # the indentation an indented code block needs, while in one
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if fence:
                if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                    fence = None
                    blank, paragraph = False, False
                continue
            if not stripped:
                blank, paragraph = True, False
                continue
            indent = indentation(line)
            if code is not None:
                if indent >= code:
                    continue
                code = None
            # After a blank line, a line less indented than the text of an item ends the item.
            if blank:
                while items and indent < items[-1]:
                    items.pop()
            base = items[-1] if items else 0
            if indent >= base + 4 and not paragraph:
                code = base + 4
                blank = False
                continue
            blank = False
            if marker and indent < base + 4:
                fence = marker.group(1)
                paragraph = False
                continue
            item = list_marker.match(stripped)
            if item and indent < base + 4:
                while items and indent < items[-1]:
                    items.pop()
                spaces = len(item.group(2).expandtabs(4)) if item.group(2) else 1
                items.append(indent + len(item.group(1)) + (spaces if 1 <= spaces <= 4 else 1))
            paragraph = not re.match(r"\s{0,3}(#{1,6}(\s|$)|([-*_])\s*(\3\s*){2,}$)", line)
            yield number, re.sub(r"(`+).*?\1", "", line)

def slug(heading):
    """The anchor GitHub makes of a heading: a link gives its text; tags and punctuation go."""
    text = re.sub(r"!?\[([^\]]*)\](\([^)]*\)|\[[^\]]*\])?", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
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
