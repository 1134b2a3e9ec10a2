import StopwatchProtocol
import StopwatchdClient
import Testing
@testable import swctl

/// What swctl says when the name or the daemon it was given is not there: one line that
/// names it and says what to do.
@Suite("error messages: a stopwatch not there, a daemon not there")
struct ErrorMessageTests {
    /// A missing name, the names listed, and the one suggested.
    static let closeNames: [(String, [String], String?)] = [
        ("tae", ["coffee", "tea"], "tea"), ("Tea", ["tea"], "tea"), ("TEA", ["Tea", "tea"], "Tea"),
        ("wrok", ["work"], "work"), ("wor", ["work"], "work"), ("workk", ["work"], "work"), ("wkr", ["work"], nil),
        ("reading", ["readng"], "readng"), ("readinggg", ["reading"], "reading"), ("readingggg", ["reading"], nil),
        ("a", ["b"], nil), ("ab", ["ba"], nil), ("ab", ["AB"], "AB"), ("a", ["tea"], nil), ("ab", ["tea"], nil),
        ("tea", ["tae"], "tae"), ("cafe", ["café"], "café"), ("CAFÉ", ["café"], "café"),
        // The closest wins; a tie goes to the first, as List sorts them.
        ("teas", ["tea", "teas2", "teasx"], "tea"), ("tex", ["tea", "tee"], "tea"), ("wrk", ["wok", "work"], "wok"),
        ("nothing", [], nil), ("tea", ["tea"], nil),
    ]

    @Test("a name close to one created is suggested: the same but for case, or 1 or 2 edits away (fewer for a short name)",
          arguments: ErrorMessageTests.closeNames)
    func closest(name: String, listed: [String], suggested: String?) {
        #expect(MissingStopwatch.closest(to: name, among: listed) == suggested)
    }

    @Test("the line names the stopwatch and points at swctl list, with 'did you mean' when a name is close")
    func message() {
        #expect(MissingStopwatch.message("tae", listed: ["tea"]) == "swctl: there is no stopwatch 'tae' (see 'swctl list'); did you mean 'tea'?")
        #expect(MissingStopwatch.message("tae", listed: ["coffee"]) == "swctl: there is no stopwatch 'tae' (see 'swctl list')")
        #expect(MissingStopwatch.message("tae", listed: nil) == "swctl: there is no stopwatch 'tae' (see 'swctl list')")
        // Control characters in names never reach the terminal as they are.
        #expect(MissingStopwatch.message("t\u{1B}a", listed: ["t\u{1B}ae"]) == "swctl: there is no stopwatch 't\\u{1B}a' (see 'swctl list'); did you mean 't\\u{1B}ae'?")
        // A bare `swctl stop` names the default stopwatch, which a newcomer never named.
        #expect(MissingStopwatch.message("default", listed: []) == "swctl: there is no stopwatch 'default' (see 'swctl list'); 'swctl start' makes it")
    }

    @Test("the edit distance stops early past its limit, and is exact within it")
    func editDistance() {
        let scalars = { (text: String) in Array(text.unicodeScalars) }
        #expect(MissingStopwatch.editDistance(scalars("kitten"), scalars("sitting"), atMost: 5) == 3)
        #expect(MissingStopwatch.editDistance(scalars("kitten"), scalars("sitting"), atMost: 2) == 3)
        #expect(MissingStopwatch.editDistance(scalars(""), scalars("ab"), atMost: 2) == 2)
        // Two neighbours swapped are one edit; farther apart, two.
        #expect(MissingStopwatch.editDistance(scalars("tae"), scalars("tea"), atMost: 2) == 1)
        #expect(MissingStopwatch.editDistance(scalars("abcd"), scalars("dbca"), atMost: 5) == 2)
        #expect(MissingStopwatch.editDistance(scalars("ca"), scalars("abc"), atMost: 5) == 3)
        #expect(MissingStopwatch.editDistance(scalars("ab"), scalars(""), atMost: 2) == 2)
        #expect(MissingStopwatch.editDistance(scalars(String(repeating: "a", count: 64)), scalars(String(repeating: "b", count: 64)), atMost: 2) == 3)
    }

    @Test("no daemon: swctl run from a checkout's .build says 'swift run stopwatchd'; installed, 'stopwatchd'")
    func startHint() {
        let error = ClientError.unreachable(path: "/run/user/1000/stopwatchd/stopwatchd.sock", reason: "No such file or directory")
        let checkout = error.message(executable: { "/home/me/stopwatchd/.build/debug/swctl" })
        #expect(checkout == "no stopwatchd at /run/user/1000/stopwatchd/stopwatchd.sock (No such file or directory); start one with 'swift run stopwatchd' in another terminal of this checkout, or pick another with --socket")
        // A scratch path beside .build too: `make`'s release build, a sanitizer's.
        for built in ["/src/p/.build-release/release/swctl", "/src/p/.build-tsan/x86_64-unknown-linux-gnu/debug/swctl"] {
            #expect(error.message(executable: { built }) == checkout)
        }
        for installed in ["/usr/local/bin/swctl", "/usr/bin/swctl", "/home/me/.buildings/swctl", nil] {
            #expect(error.message(executable: { installed }) == error.description)
            #expect(error.description.contains("start one with 'stopwatchd' or 'systemctl --user start stopwatchd.socket'"))
        }
        // Other errors are as the client library says them.
        let refused = ClientError.refused(errorName: "io.stopwatchd.TooManyLaps", explanation: "too many")
        #expect(refused.message(executable: { "/x/.build/debug/swctl" }) == "too many")
    }

    @Test("timer says how many laps its countdown cleared: none, one, several")
    func lapsCleared() {
        #expect(StatusText.lapsClearedNote(0) == nil)
        #expect(StatusText.lapsClearedNote(1) == "(1 lap cleared)")
        #expect(StatusText.lapsClearedNote(2) == "(2 laps cleared)")
    }
}
