#!/usr/bin/env bash
# The same stopwatches from another machine, through a real OpenSSH server of the test's
# own: `swctl --host` for start, stop, lap, status, list, timer and wait, log, and a watch
# that sees ticks and reconnects through a new ssh after the remote daemon restarts; the
# Python varlink CLI with `--bridge`; and, with an unreachable host or a refused key, exit
# 69 and ssh's own message within 5 s.
#
# What it starts, and stops again whatever happens:
#   - a test user (useradd, unlocked with `usermod -p '*'`: sshd refuses a locked account
#     even with a key), with a generated key in its authorized_keys;
#   - `sshd -D -f CONFIG` on 127.0.0.1 and a free port, with a generated host key, its own
#     config and `UsePAM no`: never the machine's own sshd, never port 22;
#   - that user's stopwatchd on the user's socket ($XDG_RUNTIME_DIR/stopwatchd), which
#     sshd's `SetEnv` gives the remote session as pam_systemd would on a real machine.
#
#   bash Tests/ssh/ssh.sh [DIR]     # DIR holds the built swctl and stopwatchd (.build/debug)
#
# Needs root (its own sshd, a user) and Debian's openssh-server, which `.ci/run` installs.
# Adding a user (and /run/sshd where missing) changes the machine: it runs only with
# STOPWATCHD_TEST_SYSTEM=1, which `.ci/run` sets.
set -euo pipefail
cd "$(dirname "$0")/../.."

bin=$(cd "${1:-.build/debug}" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the ssh test needs root (a test user and an sshd of its own)"
    exit 0
fi
if [ "${STOPWATCHD_TEST_SYSTEM:-}" != 1 ]; then
    echo "SKIP: the ssh test adds a user to this machine (and /run/sshd): it runs only with STOPWATCHD_TEST_SYSTEM=1"
    exit 0
fi
[ -x /usr/sbin/sshd ] || fail "/usr/sbin/sshd is missing: install Debian's openssh-server (.ci/run does)"
for binary in swctl stopwatchd; do [ -x "$bin/$binary" ] || fail "no $bin/$binary: build it first"; done

started=$(($(date +%s%N) / 1000000))
# World-searchable: sshd reads the user's authorized_keys as the user, and the user runs
# the binaries copied here.
work=$(mktemp -d /tmp/swssh-XXXXXX)
chmod 0755 "$work"
user="swssh$$"
sshd_pid=
daemon_pid=
watch_pid=
made_privsep_dir=no
cleanup() {
    local pid
    for pid in "$watch_pid" "$daemon_pid" "$sshd_pid"; do
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    # Whatever sessions of the user's are left (a bridge whose ssh was killed).
    pkill -KILL -u "$user" 2>/dev/null || true
    userdel "$user" 2>/dev/null || true
    [ "$made_privsep_dir" = no ] || rmdir /run/sshd 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
show_logs() {
    echo "--- sshd log:" >&2; cat "$work/sshd.log" >&2 || true
    echo "--- stopwatchd log:" >&2; cat "$work/daemon.log" >&2 || true
}

# Waits up to $1 seconds for the command after it to succeed.
within() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Milliseconds since $1 (a now_ms).
ms_since() { echo $(($(now_ms) - $1)); }

echo "== a test user, keys, and an sshd of the test's own"
mkdir -p "$work/bin" "$work/home/.ssh" "$work/run"
cp "$bin/swctl" "$bin/stopwatchd" "$work/bin/"
chmod 0755 "$work/bin" "$work/bin/swctl" "$work/bin/stopwatchd"
useradd --no-create-home --home-dir "$work/home" --shell /bin/sh --user-group "$user"
usermod -p '*' "$user"
uid=$(id -u "$user")
gid=$(id -g "$user")
ssh-keygen -q -t ed25519 -N '' -C "swctl test client" -f "$work/client_key"
ssh-keygen -q -t ed25519 -N '' -C "a key the server does not know" -f "$work/stranger_key"
ssh-keygen -q -t ed25519 -N '' -C "swctl test host" -f "$work/host_key"
cp "$work/client_key.pub" "$work/home/.ssh/authorized_keys"
chmod 0700 "$work/home/.ssh" "$work/run"
chmod 0600 "$work/home/.ssh/authorized_keys"
chown -R "$user:$user" "$work/home" "$work/run"
# sshd's privilege separation directory, which Debian's unit would make.
if [ ! -d /run/sshd ]; then
    mkdir -m 0755 /run/sshd
    made_privsep_dir=yes
fi

port=$(free_port)
cat >"$work/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile none
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthorizedKeysFile .ssh/authorized_keys
AllowUsers $user
PermitRootLogin no
X11Forwarding no
AllowTcpForwarding no
# What pam_systemd and the user's profile give a real session: its runtime directory, and
# swctl on the PATH.
SetEnv XDG_RUNTIME_DIR=$work/run PATH=$work/bin:/usr/bin:/bin
LogLevel VERBOSE
EOF
/usr/sbin/sshd -t -f "$work/sshd_config" || fail "sshd refuses the test's config"
/usr/sbin/sshd -D -e -f "$work/sshd_config" 2>"$work/sshd.log" &
sshd_pid=$!
within 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" \
    || { show_logs; fail "sshd did not listen on 127.0.0.1:$port"; }
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$work/host_key.pub")" >"$work/known_hosts"

# The client side: ssh with this test's key and known hosts, and none of root's own config.
ssh_options="-F /dev/null -p $port -o UserKnownHostsFile=$work/known_hosts -o StrictHostKeyChecking=yes"
export STOPWATCHD_SSH="ssh $ssh_options -i $work/client_key"
host="$user@127.0.0.1"
swctl() { "$bin/swctl" --host "$host" "$@"; }
# A plain ssh first: when this fails, the problem is the set-up, not swctl.
ssh $ssh_options -i "$work/client_key" -T -o BatchMode=yes "$host" true \
    || { show_logs; fail "plain ssh to the test's sshd failed"; }

echo "== the user's stopwatchd, on the user's socket"
setpriv --reuid="$uid" --regid="$gid" --init-groups \
    env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/home/state" \
    "$work/bin/stopwatchd" --tick 200ms >"$work/daemon.log" 2>&1 &
daemon_pid=$!
within 10 test -S "$work/run/stopwatchd/stopwatchd.sock" || { show_logs; fail "the user's stopwatchd did not start"; }

echo "== commands through ssh"
swctl start work | grep -q "^work counting" || fail "start through --host"
swctl lap work | grep -q "^work counting" || fail "lap through --host"
swctl status work | grep -q "lap 1" || fail "status through --host shows no lap: $(swctl status work)"
swctl --json status work | grep -q '"state":"counting"' || fail "status --json through --host"
swctl stop work | grep -q "^work paused" || fail "stop through --host"
swctl list | grep -q "^work" || fail "list through --host"
# The same through $STOPWATCHD_HOST.
STOPWATCHD_HOST="$host" "$bin/swctl" status work | grep -q "^work paused" || fail "\$STOPWATCHD_HOST"
swctl log work | grep -q "work" || fail "log through --host shows no interval: $(swctl log work)"
swctl log --json work | grep -q '"elapsed_ms"' || fail "log --json through --host"

echo "== timer and wait through ssh"
swctl timer tea 1500ms >/dev/null
begin=$(now_ms)
swctl wait tea || fail "wait through --host exited $?"
echo "wait returned after $(ms_since "$begin") ms (a 1.5 s countdown)"
swctl status tea | grep -q "+" || fail "tea has not expired: $(swctl status tea)"

echo "== watch through ssh: ticks, then a new ssh after the daemon restarts"
swctl start work >/dev/null
# The program itself, not the shell function: $! must be the watcher, for the kill below.
"$bin/swctl" --host "$host" watch work --format '{state} {elapsed_ms}' >"$work/watch.out" 2>"$work/watch.err" &
watch_pid=$!
ticks() { grep -c '^counting' "$work/watch.out" || true; }
ticks_at_least() { [ "$(ticks)" -ge "$1" ]; }
within 10 ticks_at_least 3 || { show_logs; cat "$work/watch.err" >&2; fail "watch through --host saw $(ticks) ticks"; }
kill "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
within 10 grep -q "^unavailable" "$work/watch.out" || fail "watch did not say the daemon went away: $(tail -3 "$work/watch.out")"
before=$(ticks)
setpriv --reuid="$uid" --regid="$gid" --init-groups \
    env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/home/state" \
    "$work/bin/stopwatchd" --tick 200ms >>"$work/daemon.log" 2>&1 &
daemon_pid=$!
within 15 ticks_at_least $((before + 3)) || { show_logs; cat "$work/watch.err" >&2; fail "watch did not reconnect through a new ssh"; }
echo "watch: $before ticks before the restart, $(ticks) after"
kill "$watch_pid"
wait "$watch_pid" 2>/dev/null || true
watch_pid=

echo "== the Python varlink CLI through the bridge"
bridge="ssh $ssh_options -i $work/client_key -T -o BatchMode=yes $host swctl bridge"
python3 -m varlink.cli --bridge "$bridge" call io.stopwatchd.Get '{"name": "work"}' >"$work/python.out" \
    || fail "python varlink --bridge failed"
grep -q '"name": "work"' "$work/python.out" || fail "python varlink --bridge: $(cat "$work/python.out")"
systemd_version=$(systemctl --version 2>/dev/null | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
if command -v varlinkctl >/dev/null && [ "${systemd_version:-0}" -ge 257 ]; then
    # systemd 255 and later: ssh-exec: runs $SYSTEMD_SSH, here a wrapper with this test's options.
    printf '#!/bin/sh\nexec ssh %s -i %s "$@"\n' "$ssh_options" "$work/client_key" >"$work/ssh-wrapper"
    chmod 0755 "$work/ssh-wrapper"
    SYSTEMD_SSH="$work/ssh-wrapper" varlinkctl call "ssh-exec:$host:swctl,bridge" io.stopwatchd.Get '{"name":"work"}' \
        | grep -q '"work"' || fail "varlinkctl ssh-exec:"
else
    echo "(varlinkctl with ssh-exec: is not installed: systemd 257 or later has it)"
fi

echo "== failures: exit 69 with ssh's own message, within 5 s"
expect_69() {
    local what=$1 pattern=$2
    shift 2
    local begin status took
    begin=$(now_ms)
    status=0
    "$@" >/dev/null 2>"$work/failure.err" || status=$?
    took=$(ms_since "$begin")
    [ "$status" = 69 ] || fail "$what: exit $status, not 69 ($(cat "$work/failure.err"))"
    grep -q "$pattern" "$work/failure.err" || fail "$what: no '$pattern' in: $(cat "$work/failure.err")"
    [ "$took" -lt 5000 ] || fail "$what took $took ms"
    echo "$what: exit 69 in $took ms: $(cat "$work/failure.err")"
}
closed_port=$(free_port)
expect_69 "unreachable host" "Connection refused" \
    env STOPWATCHD_SSH="ssh -F /dev/null -p $closed_port -i $work/client_key" "$bin/swctl" --host "$host" status
expect_69 "refused key" "Permission denied" \
    env STOPWATCHD_SSH="ssh $ssh_options -i $work/stranger_key" "$bin/swctl" --host "$host" status
# ssh itself missing.
expect_69 "no ssh" "no-such-ssh" \
    env STOPWATCHD_SSH="no-such-ssh" "$bin/swctl" --host "$host" status

echo "ssh test passed in $(ms_since "$started") ms"
