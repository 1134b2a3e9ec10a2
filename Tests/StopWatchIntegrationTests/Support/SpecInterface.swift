import StopWatchCore
import StopwatchProtocol

/// The `io.stopwatchd` interface the daemon serves, copied here so the test needs nothing
/// outside the repository; `ProtocolTests` also checks it against SPEC §3 when the SPEC is
/// beside the checkout.
enum SpecInterface {
    static let text = """
        # Named stopwatches and countdowns kept by stopwatchd.
        interface io.stopwatchd

        type Stopwatch (
          name: string,
          state: (stopped, counting, pause),
          # Elapsed time when the reply was made, in milliseconds.
          elapsed_ms: int,
          # Split times since the last reset, in milliseconds, oldest first.
          laps_ms: []int,
          # A countdown's length in milliseconds; absent for a plain stopwatch.
          target_ms: ?int,
          # false: time in suspend is not counted (the awake clock); true or absent: it is.
          counts_sleep: ?bool,
          # The note of the interval counting now, if one was given.
          note: ?string,
          # The cycle this stopwatch runs, if any.
          cycle: ?Cycle
        )

        # One phase of a cycle: a countdown with a label.
        type Phase (label: string, target_ms: int)

        # A sequence of countdowns run one after another, "rounds" times (absent: without end).
        type Cycle (
          phases: []Phase,
          # The phase running now (0-based), and the round (1-based).
          phase: int,
          round: int,
          rounds: ?int,
          # true: the next phase starts at the instant the last one expires; false: at Next.
          auto: bool
        )

        # One counting interval: from a start or resume to the stop or remove that ended it.
        type Interval (
          # 16 lowercase hex digits, unique across devices, kept through corrections.
          id: string,
          name: string,
          # Wall-clock time of the start, in milliseconds since the Unix epoch.
          start_ms: int,
          # Wall-clock time of the end; absent while the interval is still counting.
          end_ms: ?int,
          # Time counted in the interval (boot clock: suspend included, clock steps not).
          elapsed_ms: int,
          note: ?string,
          # The cycle phase it was, if any.
          phase: ?string,
          # The name of the device whose daemon recorded it.
          device: string
        )

        # A device whose history this daemon reads: itself, or one whose folder a sync tool brought.
        type Device (
          id: string,
          name: string,
          this: bool,
          intervals: int,
          # The end of its latest interval, and when its folder last changed (epoch ms).
          last_end_ms: ?int,
          changed_ms: ?int
        )

        # Starts counting, or resumes a paused stopwatch; creates it if needed.
        # at_ms: it began at that earlier wall-clock instant. note: the new interval's note.
        method Start(name: ?string, at_ms: ?int, note: ?string) -> (stopwatch: Stopwatch)
        # Pauses a counting stopwatch; at_ms: it ended at that earlier instant.
        method Stop(name: ?string, at_ms: ?int) -> (stopwatch: Stopwatch)
        # Start when not counting, Stop when counting.
        method Toggle(name: ?string, at_ms: ?int, note: ?string) -> (stopwatch: Stopwatch)
        # Back to zero; refused while counting.
        method Reset(name: ?string) -> (stopwatch: Stopwatch)
        # Records a split; only while counting.
        method Lap(name: ?string) -> (stopwatch: Stopwatch)
        # Makes it a countdown of target_ms, or a plain stopwatch with null; any state; creates it if needed.
        method SetTarget(name: ?string, target_ms: ?int) -> (stopwatch: Stopwatch)
        # From any state: back to zero, laps cleared, a countdown of target_ms counting at once.
        method Countdown(name: ?string, target_ms: int) -> (stopwatch: Stopwatch)
        method Get(name: ?string) -> (stopwatch: Stopwatch)
        method List() -> (stopwatches: []Stopwatch)
        method Remove(name: string) -> ()
        # Needs "more": the current state at once, then one reply per change, tick and expiry.
        method Watch(name: ?string) -> (
          stopwatch: Stopwatch,
          event: (current, tick, start, stop, reset, lap, target, expired, removed, phase, snooze)
        )
        # Intervals overlapping [since_ms, until_ms), oldest first, at most 10,000 a reply; "more" streams the rest.
        method History(name: ?string, since_ms: ?int, until_ms: ?int, device: ?string) -> (intervals: []Interval)
        # Whether time in suspend counts; creates the stopwatch if needed.
        method SetCountsSleep(name: ?string, counts_sleep: bool) -> (stopwatch: Stopwatch)
        # Adds an ended interval to the history; no stopwatch changes.
        method Track(name: string, start_ms: int, end_ms: int, note: ?string) -> (interval: Interval)
        # Corrects an ended interval: given fields change, absent ones stay. id: the id or a unique prefix of 6 or more digits.
        method Amend(id: string, name: ?string, start_ms: ?int, end_ms: ?int, note: ?string) -> (interval: Interval)
        method Delete(id: string) -> (interval: Interval)
        # Takes back this device's latest Track, Amend or Delete not yet taken back.
        method Undo() -> (interval: Interval, undone: (track, amend, delete))
        method Devices() -> (devices: []Device)
        # Starts a cycle from its first phase, now, from any state.
        method StartCycle(name: ?string, phases: []Phase, rounds: ?int, auto: bool) -> (stopwatch: Stopwatch)
        # Ends the current phase now and starts the next (a cycle); refused for anything else.
        method Next(name: ?string) -> (stopwatch: Stopwatch)
        # An expired countdown counts on and expires again by_ms from now.
        method Snooze(name: ?string, by_ms: int) -> (stopwatch: Stopwatch)
        # The same countdown, or the same cycle from its first phase, from zero, now.
        method Restart(name: ?string) -> (stopwatch: Stopwatch)

        error InvalidName (name: string)
        error InvalidTransition (stopwatch: Stopwatch, method: string)
        error TooManyStopwatches (limit: int)
        error TooManyLaps (limit: int)
        error TooManyResults (limit: int)
        error WatchTooSlow (pending: int)
        error NoSuchStopwatch (name: string)
        error NoSuchInterval (id: string)
        error InvalidInterval (reason: string)
        error NothingToUndo ()
        error ProtocolError (reason: string)
        """
}
