#!/usr/bin/env bash
# Static checks of the units as `make install` lays them out: `systemd-analyze verify` is
# clean for all four, the system service's exposure rating is at most 1.0, and
# `make install DESTDIR=… PREFIX=/usr` produces the tree a package holds.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v systemd-analyze >/dev/null; then
    echo "SKIP: systemd-analyze is not installed"
    exit 0
fi
work=$(mktemp -d /tmp/swan-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== make install DESTDIR=… PREFIX=/usr"
make --no-print-directory install DESTDIR="$work/package" PREFIX=/usr >/dev/null
expected="usr/bin/stopwatchd
usr/bin/swctl
usr/lib/systemd/system/stopwatchd.service
usr/lib/systemd/system/stopwatchd.socket
usr/lib/systemd/user/stopwatchd.service
usr/lib/systemd/user/stopwatchd.socket
usr/lib/sysusers.d/stopwatchd.conf
usr/share/bash-completion/completions/stopwatchd -> swctl
usr/share/bash-completion/completions/swctl
usr/share/fish/vendor_completions.d/stopwatchd.fish -> swctl.fish
usr/share/fish/vendor_completions.d/swctl.fish
usr/share/man/man1/swctl.1
usr/share/man/man8/stopwatchd.8
usr/share/stopwatchd/hooks/notify
usr/share/zsh/site-functions/_swctl"
actual=$(cd "$work/package" && find . \( -type f -printf '%P\n' \) -o \( -type l -printf '%P -> %l\n' \) | sort)
[ "$actual" = "$expected" ] || fail "installed files differ:\n$actual"
grep -qx 'ExecStart=/usr/bin/stopwatchd --allow-group stopwatch --hook-dir /etc/stopwatchd/hooks' "$work/package/usr/lib/systemd/system/stopwatchd.service" \
    || fail "the system unit's ExecStart does not point at /usr/bin/stopwatchd with the system's hook directory"
grep -qx 'ExecStart=/usr/bin/stopwatchd --exit-idle 5min' "$work/package/usr/lib/systemd/user/stopwatchd.service" \
    || fail "the user unit's ExecStart does not point at /usr/bin/stopwatchd with --exit-idle 5min"
"$work/package/usr/bin/swctl" --version | grep -q '^swctl ' || fail "the installed swctl does not run"
[ "$(stat -c %a "$work/package/usr/share/stopwatchd/hooks/notify")" = 755 ] || fail "the notify hook is not installed 0755"
sh -n "$work/package/usr/share/stopwatchd/hooks/notify" || fail "the notify hook is not valid sh"
for unit in system user; do
    for setting in MemoryMax TasksMax; do
        grep -q "^$setting=" "$work/package/usr/lib/systemd/$unit/stopwatchd.service" \
            || fail "the $unit service sets no $setting= (a client must not make the daemon take the machine)"
    done
done
echo "ok: $(echo "$expected" | wc -l) files"
make --no-print-directory uninstall DESTDIR="$work/package" PREFIX=/usr >/dev/null
left=$(cd "$work/package" && find . ! -type d | sort)
[ -z "$left" ] || fail "make uninstall left files behind:\n$left"
[ ! -e "$work/package/usr/share/stopwatchd" ] || fail "make uninstall left usr/share/stopwatchd behind"

echo "== systemd-analyze verify"
# Installed where they can run, so verify can check ExecStart.
make --no-print-directory install DESTDIR= PREFIX="$work/prefix" >/dev/null
units="$work/prefix/lib/systemd"
# verify looks up each Documentation=man: page with man(1): find the installed ones.
export MANPATH="$work/prefix/share/man:"
output=$(systemd-analyze verify "$units/system/stopwatchd.socket" "$units/system/stopwatchd.service" 2>&1) \
    || fail "verify (system units): $output"
[ -z "$output" ] || fail "verify (system units) is not clean: $output"
install -d -m 0700 "$work/run"
output=$(XDG_RUNTIME_DIR="$work/run" systemd-analyze --user verify "$units/user/stopwatchd.socket" "$units/user/stopwatchd.service" 2>&1) \
    || fail "verify (user units): $output"
[ -z "$output" ] || fail "verify (user units) is not clean: $output"
echo "ok: clean"

echo "== systemd-analyze security --offline=yes"
rating=$(systemd-analyze security --offline=yes "$units/system/stopwatchd.service" 2>&1 | sed -n 's/.*Overall exposure level for stopwatchd.service: \([0-9.]*\).*/\1/p')
[ -n "$rating" ] || fail "no exposure rating"
awk -v rating="$rating" 'BEGIN { exit !(rating <= 1.0) }' || fail "exposure $rating is above 1.0"
echo "ok: exposure $rating (at most 1.0)"
