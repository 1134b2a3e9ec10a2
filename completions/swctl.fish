# fish completion for swctl (stopwatchd's client) and stopwatchd.
# Installed as $(PREFIX)/share/fish/vendor_completions.d/swctl.fish, with a
# stopwatchd.fish symlink beside it.

# The command and the name typed so far: the words before the cursor that are neither
# options nor option values. Status 1 when the cursor is on an option's value. (The
# stock __fish_use_subcommand would take the PATH of `--socket PATH` for the command.)
function __swctl_args
    set -l skip 0
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
        else if contains -- $w --socket --host --format -f --for --timeout --since --until --by --device --at --note --name --start --end --rounds
            set skip 1
        else if not string match -q -- '-*' $w
            echo $w
        end
    end
    test $skip = 0
end

# The socket option on the line (--socket PATH, --socket=PATH, --user, --system, or
# --host HOST), if any, with status 1 when none; one still waiting for its value does not count.
function __swctl_socket_option
    set -l words (commandline -opc)
    set -l found
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --socket --host
                test $i -lt (count $words); and set found $words[$i] $words[(math $i + 1)]
            case '--socket=*' '--host=*' --user --system
                set found $words[$i]
        end
    end
    string join \n -- $found
    set -q found[1]
end

function __swctl_needs_command
    set -l args (__swctl_args); or return
    test (count $args) -eq 0
end

# True for a command that takes a NAME and has none yet.
function __swctl_needs_name
    set -l args (__swctl_args); or return
    test (count $args) -eq 1
    and contains -- $args[1] start stop toggle reset lap status remove timer cycle pomodoro next snooze restart skip-sleep wait watch log track
end

# True for amend or delete without an INTERVAL yet.
function __swctl_needs_interval
    set -l args (__swctl_args); or return
    test (count $args) -eq 1
    and contains -- $args[1] amend delete
end

# True for a command among $argv, and for the value of the option being typed (fish asks
# the option's condition for its value too).
function __swctl_command_in
    set -l args (__swctl_args); or return 0
    contains -- "$args[1]" $argv
end

# True for a command that is $argv[1], and the cursor not on an option's value.
function __swctl_command_is
    set -l args (__swctl_args); or return
    test "$args[1]" = $argv[1]
end

# True for timer without --keep or --off yet.
function __swctl_timer_option_wanted
    __swctl_command_is timer; or return
    set -l words (commandline -opc)
    not contains -- --keep $words; and not contains -- --off $words
end

# True for wait without the option $argv[1] yet (--for or --timeout), and for its value.
function __swctl_wait_option_wanted
    set -l words (commandline -opc)
    test "$words[-1]" = $argv[1]; and return
    __swctl_command_is wait; or return
    not contains -- $argv[1] $words; and not string match -q -- "$argv[1]=*" $words
end

# True for watch without a --format yet, and for the value of the --format being typed
# (fish asks the option's condition for its value too).
function __swctl_format_wanted
    set -l words (commandline -opc)
    contains -- $words[-1] -f --format; and return
    set -l args (__swctl_args)
    test "$args[1]" = watch
    and not contains -- -f $words; and not contains -- --format $words
    and not string match -q -- '--format=*' $words
end

# True for log or report (with an argument: only that one), and for the value of one of
# their options (fish asks the option's condition for its value too).
function __swctl_history_option_wanted
    set -l words (commandline -opc)
    contains -- $words[-1] --since --until --by --device; and return
    set -l args (__swctl_args); or return
    if set -q argv[1]
        test "$args[1]" = $argv[1]
    else
        contains -- "$args[1]" log report
    end
end

# The names of the running daemon's stopwatches, asked through the same socket option.
# Nothing when no daemon answers within a second. `list --json`, not the table: no header
# line to skip, and a name holding spaces stays one. A name has no control characters, so
# its only JSON escapes are \" and \\. fish escapes each name for the line.
function __swctl_names
    set -l swctl (commandline -opc)[1]
    set -l timeout
    command -q timeout; and set timeout timeout 1
    $timeout $swctl (__swctl_socket_option) --json list 2>/dev/null </dev/null \
        | string match -ra '"name":"(?:[^"\\\\]|\\\\.)*"' | string replace -r '^"name":"(.*)"$' '$1' \
        | string replace -ra '\\\\(.)' '$1'
end

complete -c swctl -f
complete -c swctl -n __swctl_needs_command -a start -d 'start counting, or resume (creates NAME)'
complete -c swctl -n __swctl_needs_command -a stop -d pause
complete -c swctl -n __swctl_needs_command -a toggle -d 'start when not counting, stop when counting'
complete -c swctl -n __swctl_needs_command -a reset -d 'back to zero (only when not counting)'
complete -c swctl -n __swctl_needs_command -a lap -d 'record a split time (only while counting)'
complete -c swctl -n __swctl_needs_command -a status -d 'show a stopwatch'
complete -c swctl -n __swctl_needs_command -a list -d 'show all stopwatches'
complete -c swctl -n __swctl_needs_command -a remove -d 'delete a stopwatch'
complete -c swctl -n __swctl_needs_command -a timer -d 'start a countdown, or set or clear a target'
complete -c swctl -n __swctl_needs_command -a cycle -d 'countdowns one after another (DURATION[:LABEL]...)'
complete -c swctl -n __swctl_needs_command -a pomodoro -d 'a cycle of 25m focus and 5m breaks, the fourth 15m'
complete -c swctl -n __swctl_needs_command -a next -d "end a cycle's phase now and start the next"
complete -c swctl -n __swctl_needs_command -a snooze -d 'an expired countdown expires again DURATION from now (5m)'
complete -c swctl -n __swctl_needs_command -a restart -d 'the same countdown (or cycle) from zero, now'
complete -c swctl -n __swctl_needs_command -a skip-sleep -d 'count only time awake, not time in suspend'
complete -c swctl -n __swctl_needs_command -a wait -d "block until a countdown expires, it stops, it changes, or a cycle's phase does"
complete -c swctl -n __swctl_needs_command -a watch -d 'print each update'
complete -c swctl -n __swctl_needs_command -a log -d 'print the counting intervals'
complete -c swctl -n __swctl_needs_command -a report -d 'time per name, or per day, device or phase and name'
complete -c swctl -n __swctl_needs_command -a track -d 'add an interval to the history'
complete -c swctl -n __swctl_needs_command -a amend -d 'correct an ended interval'
complete -c swctl -n __swctl_needs_command -a delete -d 'remove an ended interval from the history'
complete -c swctl -n __swctl_needs_command -a undo -d 'take back the latest track, amend or delete'
complete -c swctl -n __swctl_needs_command -a devices -d 'the devices whose history the daemon reads'
complete -c swctl -n __swctl_needs_command -a bridge -d 'relay standard input and output to the daemon (ssh HOST swctl bridge)'
complete -c swctl -n __swctl_needs_name -a '(__swctl_names)' -d stopwatch
# INTERVAL: ids are not completed (they are read off 'swctl log'); @1 is the latest.
complete -c swctl -n __swctl_needs_interval -a @1 -d 'the latest ended interval'

# Only one of --socket, --user, --system and --host.
complete -c swctl -n 'not __swctl_socket_option' -l socket -r -F -d "the daemon's socket"
complete -c swctl -n 'not __swctl_socket_option' -l user -d 'the user daemon'
complete -c swctl -n 'not __swctl_socket_option' -l system -d 'the system daemon'
complete -c swctl -n 'not __swctl_socket_option' -l host -x -a '(__fish_print_hostnames)' -d 'the daemon on HOST, through ssh'
complete -c swctl -n 'not __fish_contains_opt json' -l json -d 'print the stopwatch as JSON'
complete -c swctl -s h -l help -d 'show the help'
complete -c swctl -l version -d 'show the version'
complete -c swctl -n __swctl_format_wanted -s f -l format -x -a 'plain json waybar i3blocks polybar' \
    -d 'output format, or a TEMPLATE using {name} {state} {elapsed} {elapsed_ms} {laps} {last_lap} {remaining} {target} {note} {phase} {round}'
complete -c swctl -n __swctl_timer_option_wanted -l keep -d 'set the target and count on (a reminder)'
complete -c swctl -n __swctl_timer_option_wanted -l off -d 'make it a plain stopwatch again'
complete -c swctl -n '__swctl_wait_option_wanted --for' -l for -x -a 'expired stop change phase' -d 'what to wait for'
complete -c swctl -n '__swctl_history_option_wanted' -l since -x -a 'now today yesterday monday tuesday wednesday thursday friday saturday sunday' -d 'from WHEN'
complete -c swctl -n '__swctl_history_option_wanted' -l until -x -a 'now today yesterday monday tuesday wednesday thursday friday saturday sunday' -d 'until WHEN'
complete -c swctl -n '__swctl_history_option_wanted' -l csv -d 'CSV with a header row'
complete -c swctl -n '__swctl_history_option_wanted' -l device -x -d 'only the intervals of DEVICE (its name or id)'
complete -c swctl -n '__swctl_history_option_wanted report' -l by -x -a 'name day device phase' -d 'totals per name, or per day, device or phase and name'
complete -c swctl -n '__swctl_wait_option_wanted --timeout' -l timeout -x -d 'give up after DURATION (exit 124)'
set -l __swctl_when 'now today yesterday monday tuesday wednesday thursday friday saturday sunday'
complete -c swctl -n '__swctl_command_in start stop toggle' -l at -x -a $__swctl_when -d 'it happened then (09:05, 10m)'
complete -c swctl -n '__swctl_command_in start toggle track amend' -l note -x -d "the interval's note"
complete -c swctl -n '__swctl_command_in amend' -l name -x -a '(__swctl_names)' -d "the interval's new name"
complete -c swctl -n '__swctl_command_in amend' -l start -x -a $__swctl_when -d "the interval's new start"
complete -c swctl -n '__swctl_command_in amend' -l end -x -a $__swctl_when -d "the interval's new end"
complete -c swctl -n '__swctl_command_in skip-sleep' -l off -d 'count time in suspend again'
complete -c swctl -n '__swctl_command_in cycle pomodoro' -l rounds -x -d 'run the phases N times (1 to 1000)'
complete -c swctl -n '__swctl_command_in cycle pomodoro' -l manual -d 'each phase runs on in overtime until next'

complete -c stopwatchd -f
complete -c stopwatchd -l socket -r -F -d 'socket to listen on'
complete -c stopwatchd -l state-dir -x -a '(__fish_complete_directories)' -d 'where stopwatches are kept'
complete -c stopwatchd -l tick -x -d 'update interval while counting (250ms, 1s, 1.5s, 2m)'
complete -c stopwatchd -l allow-group -x -a '(__fish_complete_groups)' -d 'also admit members of GROUP'
complete -c stopwatchd -l log-level -x -a 'debug info notice warning error' -d 'how much to log'
complete -c stopwatchd -l max-connections -x -d 'clients at once'
complete -c stopwatchd -l max-connections-per-user -x -d 'clients at once of one other user'
complete -c stopwatchd -l max-stopwatches -x -d 'stopwatches kept'
complete -c stopwatchd -l max-laps -x -d 'laps a stopwatch keeps until reset'
complete -c stopwatchd -l max-message-size -x -d 'bytes in one message'
complete -c stopwatchd -l max-pending-events -x -d 'changes a slow watcher may fall behind'
complete -c stopwatchd -l message-timeout -x -d 'time to finish a message'
complete -c stopwatchd -l write-timeout -x -d 'time a client may stop reading'
complete -c stopwatchd -l idle-timeout -x -d 'time a client may stay without a call or a watch'
complete -c stopwatchd -l hook-dir -x -a '(__fish_complete_directories)' -d 'hooks run at each event'
complete -c stopwatchd -l hook-timeout -x -d 'time a hook may run before SIGTERM'
complete -c stopwatchd -l max-hooks-running -x -d 'hooks running at once'
complete -c stopwatchd -l hook-backlog -x -d 'hook runs waiting to start, kept on disk'
complete -c stopwatchd -l history-memory -x -d 'memory all history streams may hold together'
complete -c stopwatchd -l history-devices -x -d "other devices' folders read at most"
complete -c stopwatchd -l history-days -x -d 'days of history kept'
complete -c stopwatchd -l history-dir -x -a '(__fish_complete_directories)' -d 'the history folder, one a file-sync tool may share'
complete -c stopwatchd -l device-id -x -d "this device's id in the history folder, 32 hex digits"
complete -c stopwatchd -l device-name -x -d "this device's name in histories"
complete -c stopwatchd -l exit-idle -x -d 'exit when idle this long (socket-activated only)'
complete -c stopwatchd -s h -l help -d 'show the help'
complete -c stopwatchd -l version -d 'show the version'
