import Dispatch
import LinuxSystem
import StopwatchProtocol

/// `open.json` in this device's folder: its counting intervals, for the other devices'
/// `History` (SPEC §4 "History across devices"; read by their `PeerDevices.openIntervals`),
/// made and written on a queue of its own. With many intervals counting (a thousand cycles,
/// each phase a new interval) making the list, encoding it and replacing the file take
/// milliseconds, which the serving queue would otherwise spend while a phase change or a
/// call waits behind them. When it is written is `OpenIntervalsSchedule`'s.
///
/// The file is `{"written_ms":W,"intervals":[{"id","name","start_ms","elapsed_ms"[,"note"]
/// [,"phase"]}…]}`, no `end_ms`, no `device`, in start order. `W` is the wall clock the
/// elapsed times are as of: it is written at changes only, so a reader adds the time since.
/// Replaced atomically: a temporary file made exclusively without following a link, renamed
/// over. Not flushed: a view for the other devices, rebuilt at every change and at the
/// daemon's start, so a crash that loses it loses nothing. Skipped when the intervals are
/// what was written last (their elapsed times included). A failure is logged once per
/// episode: writing the history itself says more. Never larger than the other devices read
/// (`PeerDevices.openFileLimit`): when they do not fit, those that began latest and fit are
/// written (logged once until they fit again).
///
/// Threading:
/// - `queue`: its own, serial. Every stored `var` is used only there.
/// - `write` may be called on any thread (the serving queue does): it hands over a
///   directory descriptor, which the write closes, and a closure that makes the intervals,
///   run on `queue`, so it holds values only (snapshots read before), never the registry.
/// - `wait` and `writes` block until the writes asked for before them are done; never
///   called on `queue`, and `queue` never waits on another queue, so they cannot deadlock.
// Unchecked Sendable, so the serving queue may hand it work: see "Threading" above.
final class OpenIntervalsFile: @unchecked Sendable {
    static let temporaryName = ".open.json.tmp"

    private let queue = DispatchQueue(label: "stopwatchd.open-intervals")
    private let logger: Logger

    // On `queue` only.
    /// The intervals last written, as bytes.
    private var written: [UInt8]?
    /// Writing fails (logged once until it works).
    private var isFailing = false
    /// The last file held only the latest of more intervals than fit (logged once).
    private var isCut = false
    private var writeCount = 0

    init(logger: Logger) {
        self.logger = logger
    }

    /// Replaces `open.json` in `directory` (then closed) with what `intervals` makes, in
    /// start order, as of wall-clock `writtenMs`, on `queue`.
    func write(in directory: DirectoryDescriptor, writtenMs: Int64, _ intervals: @escaping @Sendable () -> [Interval]) {
        queue.async { [self] in
            defer { directory.close() }
            replace(in: directory, intervals(), writtenMs: writtenMs)
        }
    }

    /// The device folder could not be opened to write it.
    func failedToOpen(_ error: Errno) {
        queue.async { [self] in failed(error) }
    }

    /// Returns once the writes asked for so far are done.
    func wait() {
        queue.sync {}
    }

    /// How many times the file was written, once the writes asked for so far are done: what
    /// tells a test how often.
    var writes: Int {
        queue.sync { writeCount }
    }

    private func replace(in folder: DirectoryDescriptor, _ intervals: [Interval], writtenMs: Int64) {
        let head = Array(#"{"written_ms":\#(writtenMs),"intervals":["#.utf8)
        let tail = Array("]}\n".utf8)
        var encoded: [[UInt8]] = []
        var room = PeerDevices.openFileLimit - head.count - tail.count
        for interval in intervals.reversed() {
            var open = interval
            open.endMs = nil
            var bytes: [UInt8] = []
            HistoryLine.encodeObject(open, device: nil, into: &bytes)
            // Its comma too, but for the first.
            room -= bytes.count + (encoded.isEmpty ? 0 : 1)
            guard room >= 0 else { break }
            encoded.append(bytes)
        }
        if encoded.count < intervals.count {
            if !isCut {
                logger.warning("\(intervals.count) intervals count here, more than \(PeerDevices.openFileName) may hold for other devices to read (\(PeerDevices.openFileLimit / 1024 / 1024) MiB): only the \(encoded.count) that began latest are written, until they fit")
            }
            isCut = true
        } else {
            isCut = false
        }
        let listed = Array(encoded.reversed().joined(separator: [UInt8(ascii: ",")]))
        guard listed != written else { return }
        let bytes = head + listed + tail
        do throws(Errno) {
            try? folder.remove(Self.temporaryName)
            let file = try folder.openFile(Self.temporaryName, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
            // Closed once, whatever fails (a second close could close a descriptor another
            // thread, a hook's spawn, was given the number of meanwhile).
            let result = Result { () throws(Errno) in try file.writeAll(bytes) }
            file.close()
            do throws(Errno) {
                try result.get()
                try folder.rename(Self.temporaryName, to: PeerDevices.openFileName)
            } catch {
                try? folder.remove(Self.temporaryName)
                throw error
            }
            written = listed
            isFailing = false
            writeCount += 1
        } catch {
            failed(error)
        }
    }

    private func failed(_ error: Errno) {
        guard !isFailing else { return }
        isFailing = true
        logger.warning("cannot write \(PeerDevices.openFileName) in the history's device folder (\(error)): other devices do not see what counts here until it can be")
    }
}
