#!/usr/bin/env bash
# Tests leave the machine alone unless asked: every test that changes the machine's own
# state (its clock, its users, its packages, what is in /run, /etc or /var) runs only with
# STOPWATCHD_TEST_SYSTEM=1, which `.ci/run` sets, and CONTRIBUTING.md names it. Checks:
#
#   - Swift tests (Tests/**/*.swift): a call that changes the machine (clock_settime(,
#     settimeofday(, adjtimex(, clock_adjtime(, sethostname(, setdomainname(; or running
#     "useradd", "groupadd", "usermod", "userdel", "groupdel" or "hwclock", or "date",
#     "timedatectl" or "sysctl" with the argument that sets: "-s"/"--set", "set-…", "-w")
#     is inside a @Test whose traits include `.enabled(if: MachineState.mayChange`, and
#     CONTRIBUTING.md names that test as Suite.function. A helper outside any test (in
#     Support/) may make such a call when its file says for which tests, in a comment
#     `// machine-state: Suite.function[, Suite.function…]`, each a test so gated and named;
#   - shell tests (Tests/**/*.sh): a script that adds or removes users or groups, installs
#     packages, sets the clock or a sysctl, or makes or removes something in /run, /etc,
#     /var or /usr tests STOPWATCHD_TEST_SYSTEM (`[ "${STOPWATCHD_TEST_SYSTEM:-}" …`, not a
#     mention in a comment), and CONTRIBUTING.md names it by path.
#
#   bash Tests/lint/machine-state.sh     # from anywhere in the repository
#
# Exits 0 when all are so, 1 otherwise, naming each file:line.
set -euo pipefail
cd "$(dirname "$0")/../.."

git ls-files -z -- 'Tests/*.swift' 'Tests/*.sh' | python3 -c '
import re, sys

# Not this file, whose patterns name what it looks for.
files = [f for f in sys.stdin.read().split("\0") if f and f != "Tests/lint/machine-state.sh"]
contributing = open("CONTRIBUTING.md", encoding="utf-8").read()
problems = []
found = []
gated = set()       # Suite.function of every test with the gate
helpers = []        # (path, line, the tests its file names) of each call outside a test

swift_call = re.compile(
    r"\b(clock_settime|settimeofday|adjtimex|clock_adjtime|sethostname|setdomainname)\s*\("
    r"|\"(/usr/s?bin/)?(useradd|groupadd|usermod|userdel|groupdel|hwclock)\""
    r"|\"(/usr/s?bin/|/bin/)?date\"\s*,\s*\[?\s*\"(-s|--set)"
    r"|\"(/usr/s?bin/|/bin/)?timedatectl\"\s*,\s*\[?\s*\"set-"
    r"|\"(/usr/s?bin/|/bin/)?sysctl\"\s*,\s*\[?\s*\"-w")
gate = ".enabled(if: MachineState.mayChange"
marker = re.compile(r"//\s*machine-state:\s*(.*)")
shell_gate = re.compile(r"(\[\[?|\btest)\s+\"?\$\{?STOPWATCHD_TEST_SYSTEM\b")

shell_change = re.compile(
    r"\b(useradd|groupadd|usermod|userdel|groupdel|hwclock)\b"
    r"|\bapt-get\b.*\binstall\b|\bpip3?\b.*\binstall\b|\bdpkg\s+-i\b"
    r"|\bdate\s+(-s|--set)\b|\btimedatectl\s+set|\bsysctl\s+-w\b"
    r"|\b(mkdir|rmdir|rm|cp|mv|install|touch|chmod|chown|ln|tee)\b[^#]*\s/(run|etc|var|usr)/")

def code(line):
    """The line without a Swift // comment (good enough: no test quotes //)."""
    return line.split("//", 1)[0]

for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    if path.endswith(".swift"):
        suite = None
        pending = None      # the traits of an @Test not yet at its func: (indentation, text)
        test = None         # (indentation, name, traits) of the test the lines are in
        for number, line in enumerate(lines, 1):
            text = code(line)
            indentation = len(line) - len(line.lstrip())
            declared = re.match(r"\s*(?:@\w+\s+)*(?:struct|final class|class|enum|extension)\s+(\w+)", text)
            if declared and indentation == 0:
                suite, test = declared.group(1), None
            if pending is None and re.match(r"\s*@Test\b", text):
                pending = (indentation, "")
            if pending is not None:
                function = re.search(r"\bfunc\s+(\w+)", text)
                pending = (pending[0], pending[1] + text + "\n")
                if function:
                    test, pending = (pending[0], function.group(1), pending[1]), None
                continue
            function = re.match(r"\s*(?:(?:static|private|fileprivate|mutating|nonisolated)\s+)*func\s+(\w+)", text)
            if function and test and indentation <= test[0]:
                test = None
            if test is not None and indentation == test[0] and text.strip() == "}":
                test = None
            if swift_call.search(text):
                if test is None:
                    helpers.append((path, number, [n.strip() for m in marker.finditer("\n".join(lines)) for n in m.group(1).split(",") if n.strip()]))
                    continue
                name = f"{suite}.{test[1]}"
                if gate not in test[2]:
                    problems.append(f"{path}:{number}: {name} changes the machine but has no {gate}, …) trait")
                if name not in contributing:
                    problems.append(f"{path}:{number}: CONTRIBUTING.md does not name {name}, which changes the machine")
                found.append(name)
            if test is not None and gate in test[2]:
                gated.add(f"{suite}.{test[1]}")
    else:
        changes = [(number, line) for number, line in enumerate(lines, 1)
                   if not line.lstrip().startswith("#") and shell_change.search(line)]
        if not changes:
            continue
        number, line = changes[0]
        if not any(shell_gate.search(l) for l in lines if not l.lstrip().startswith("#")):
            problems.append(f"{path}:{number}: changes the machine ({line.strip()}) but does not test STOPWATCHD_TEST_SYSTEM (as in [ \"${{STOPWATCHD_TEST_SYSTEM:-}}\" != 1 ])")
        if path not in contributing:
            problems.append(f"{path}:{number}: CONTRIBUTING.md does not name {path}, which changes the machine")
        found.append(path)

for path, number, tests in helpers:
    if not tests:
        problems.append(f"{path}:{number}: changes the machine outside a @Test: put it in one gated by {gate}, …), or name the gated tests that call it in a comment // machine-state: Suite.function")
    for name in tests:
        if name not in gated:
            problems.append(f"{path}:{number}: its machine-state comment names {name}, which is no test with {gate}, …)")
        elif name not in contributing:
            problems.append(f"{path}:{number}: CONTRIBUTING.md does not name {name}, which changes the machine")
        found.append(name)

for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    sys.exit(1)
print("tests that change the machine, each gated by STOPWATCHD_TEST_SYSTEM=1 and named in CONTRIBUTING.md: " + ", ".join(sorted(set(found))))
'
