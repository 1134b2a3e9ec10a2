import StopwatchProtocol
import StopwatchdClient
import Testing
@testable import swctl

/// The command lines that correct the record (SPEC §5 "Correcting the record"): `--at`,
/// `--note`, `track`, `amend`, `delete`, `undo`, `skip-sleep`, and INTERVAL; what each reads
/// as, and the one-line usage errors (exit 2) of the bad ones, refused before anything is sent.
@Suite("correction command lines")
struct CorrectionCommandLineTests {
    static func command(_ arguments: [String]) throws -> Command {
        guard case .run(let invocation) = try SwctlInvocation.parse(arguments) else {
            throw UsageError("not a run: \(arguments)")
        }
        return invocation.command
    }

    static func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try SwctlInvocation.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("start, stop and toggle take --at WHEN; start and toggle --note")
    func transitionsInThePast() throws {
        #expect(try Self.command(["start"]) == .start(name: nil, at: nil, note: nil))
        #expect(try Self.command(["start", "work", "--at", "9:05", "--note", "the parser"]) == .start(name: "work", at: .clock(hour: 9, minute: 5), note: "the parser"))
        #expect(try Self.command(["stop", "--at=17:30"]) == .stop(name: nil, at: .clock(hour: 17, minute: 30)))
        #expect(try Self.command(["stop", "work", "--at", "10m"]) == .stop(name: "work", at: .ago(milliseconds: 600_000)))
        #expect(try Self.command(["toggle", "--at", "2h", "--note", "café ☕"]) == .toggle(name: nil, at: .ago(milliseconds: 7_200_000), note: "café ☕"))
        #expect(try Self.command(["start", "--at", "2026-11-24T09:15"]) == .start(name: nil, at: .local(year: 2026, month: 11, day: 24, hour: 9, minute: 15)))
        // Every scalar counts, and 1,024 of them is the most.
        let longest = String(repeating: "é", count: 1_024)
        #expect(try Self.command(["start", "--note", longest]) == .start(name: nil, note: longest))
    }

    @Test("notes and times that are refused before anything is sent", arguments: [
        (["start", "--note", "two\nlines"], "--note takes 1 to 1024 characters, no control characters (no newline)"),
        (["start", "--note", String(repeating: "x", count: 1_025)], "--note takes 1 to 1024 characters, no control characters (no newline)"),
        (["start", "--note", ""], "--note takes 1 to 1024 characters, no control characters (no newline)"),
        (["track", "x", "9:00", "10:00", "--note", "tab\there"], "--note takes 1 to 1024 characters, no control characters (no newline)"),
        (["start", "--at", "25:00"], "--at takes \(When.forms); not '25:00'"),
        (["stop", "--at", "later"], "--at takes \(When.forms); not 'later'"),
        (["stop", "--note", "x"], "--note goes with start, toggle, track and amend: a note goes with the start of an interval ('swctl amend @1 --note TEXT' adds one after)"),
        (["reset", "--at", "9:00"], "--at goes with start, stop and toggle"),
        (["log", "--name", "x"], "--name, --start and --end go with amend"),
        (["track", "--start", "9:00"], "--name, --start and --end go with amend"),
        (["status", "--off"], "--off goes with timer and skip-sleep"),
        (["skip-sleep", "--keep"], "--keep goes with timer"),
    ])
    func refusedBeforeSending(arguments: [String], message: String) {
        #expect(Self.usageError(arguments) == message)
    }

    @Test("an argument that is not UTF-8 (a note in Latin-1) is a usage error, not a note with U+FFFD in it")
    func invalidUTF8() {
        func check(_ arguments: [[UInt8]]) -> String? {
            var buffers: [UnsafeBufferPointer<UInt8>] = []
            let copies = arguments.map { bytes in
                let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, bytes.count))
                _ = copy.initialize(from: bytes)
                buffers.append(UnsafeBufferPointer(start: copy.baseAddress, count: bytes.count))
                return copy
            }
            defer { copies.forEach { $0.deallocate() } }
            return SwctlInvocation.checkEncoding(buffers)?.message
        }
        #expect(check([Array("start".utf8), Array("--note".utf8), [0x63, 0x61, 0x66, 0xE9]]) == "argument 3 is not valid UTF-8; names and notes are text in UTF-8")
        #expect(check([Array("start".utf8), Array("--note".utf8), Array("café".utf8)]) == nil)
        #expect(check([Array("track".utf8), [0xC3]]) == "argument 2 is not valid UTF-8; names and notes are text in UTF-8")
        #expect(check([[]]) == nil)
    }

    @Test("track NAME FROM TO [--note]")
    func track() throws {
        #expect(try Self.command(["track", "work", "09:00", "12:30", "--note", "review"]) == .track(name: "work", from: .clock(hour: 9, minute: 0), to: .clock(hour: 12, minute: 30), note: "review"))
        #expect(try Self.command(["track", "work", "2h", "now"]) == .track(name: "work", from: .ago(milliseconds: 7_200_000), to: .now, note: nil))
        #expect(Self.usageError(["track", "work", "9:00"]) == "track takes NAME FROM TO, like 'swctl track work 09:00 12:30'; got 2 words")
        #expect(Self.usageError(["track", "a/b", "9:00", "10:00"]) == StopwatchName.invalidNameMessage("a/b"))
        #expect(Self.usageError(["track", "work", "9:00", "soon"]) == "track's TO takes \(When.forms); not 'soon'")
    }

    @Test("amend INTERVAL with what changes; delete INTERVAL; undo")
    func amendDeleteUndo() throws {
        #expect(try Self.command(["amend", "@1", "--note", "why"]) == .amend(.latest(1), IntervalChanges(note: "why")))
        // An empty note removes the note: for amend only.
        #expect(try Self.command(["amend", "@1", "--note", ""]) == .amend(.latest(1), IntervalChanges(note: "")))
        #expect(Self.usageError(["track", "work", "9:00", "10:00", "--note", ""]) == "--note takes \(IntervalNote.rule)")
        #expect(
            try Self.command(["amend", "0123456789ABCDEF", "--name", "tea", "--start", "9:00", "--end", "10m"])
                == .amend(.id("0123456789abcdef"), IntervalChanges(name: "tea", start: .clock(hour: 9, minute: 0), end: .ago(milliseconds: 600_000)))
        )
        #expect(try Self.command(["delete", "abc123"]) == .delete(.id("abc123")))
        #expect(try Self.command(["delete", "@12"]) == .delete(.latest(12)))
        #expect(try Self.command(["undo"]) == .undo)
        #expect(Self.usageError(["amend", "@1"]) == "amend needs something to change: --name NAME, --start WHEN, --end WHEN or --note TEXT")
        #expect(Self.usageError(["amend", "@1", "--name", "a/b"]) == StopwatchName.invalidNameMessage("a/b"))
        #expect(Self.usageError(["delete"]) == "delete takes one INTERVAL: \(IntervalReference.forms)")
        #expect(Self.usageError(["delete", "@1", "@2"]) == "delete takes one INTERVAL: \(IntervalReference.forms)")
        #expect(Self.usageError(["undo", "@1"]) == "undo takes nothing: it takes back the latest track, amend or delete")
    }

    @Test("INTERVAL: bad ones are usage errors, each said in one line", arguments: [
        ("@0", "@0 names no interval: @1 is the latest ended interval, @2 the one before"),
        ("@00", "@0 names no interval: @1 is the latest ended interval, @2 the one before"),
        ("@-1", "'@-1' is not an interval: @N takes a whole number from 1 (@1 is the latest ended interval)"),
        ("@", "'@' is not an interval: @N takes a whole number from 1 (@1 is the latest ended interval)"),
        ("@1.5", "'@1.5' is not an interval: @N takes a whole number from 1 (@1 is the latest ended interval)"),
        ("@99999999999999999999", "'@99999999999999999999' is beyond any history: @N counts back from the latest ended interval (@1)"),
        ("abc12", "'abc12' is not \(IntervalReference.forms)"),
        ("0123456789abcdef0", "'0123456789abcdef0' is not \(IntervalReference.forms)"),
        ("abcxyz", "'abcxyz' is not \(IntervalReference.forms)"),
        ("-1", "unknown option '-1'"),
    ])
    func badIntervals(text: String, message: String) {
        #expect(Self.usageError(["delete", text]) == message)
        if text.hasPrefix("@") { #expect(Self.usageError(["amend", text, "--note", "x"]) == message) }
    }

    @Test("skip-sleep [NAME] [--off]")
    func skipSleep() throws {
        #expect(try Self.command(["skip-sleep"]) == .skipSleep(name: nil, off: false))
        #expect(try Self.command(["skip-sleep", "work", "--off"]) == .skipSleep(name: "work", off: true))
        #expect(Self.usageError(["skip-sleep", "a", "b"]) == "skip-sleep takes at most one name, got 2")
    }

    @Test("the refusals of corrections, in one line each")
    func refusalMessages() {
        let noSuch = ClientError(refusal: .noSuchInterval("abc123"))
        #expect(noSuch.description == "there is no interval 'abc123' (see 'swctl log')")
        #expect(noSuch.exitStatus == 1)
        let invalid = ClientError(refusal: .invalidInterval("the end 2026-11-26T18:00:00Z is in the future; it must be at or before now"))
        #expect(invalid.description == "the end 2026-11-26T18:00:00Z is in the future; it must be at or before now")
        #expect(invalid.exitStatus == 1)
        let nothing = ClientError(refusal: .nothingToUndo)
        #expect(nothing.exitStatus == 1)
        #expect(nothing.description.hasPrefix("nothing to undo"))
        #expect(!nothing.description.contains("\n"))
    }
}
