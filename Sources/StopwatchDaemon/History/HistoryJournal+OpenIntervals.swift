import LinuxSystem
import StopwatchProtocol

/// `open.json` in this device's folder (`OpenIntervalsFile`, which writes it on a queue of
/// its own): handed the device folder from here, on the serving queue.
extension HistoryJournal {
    /// Replaces `open.json` with what `intervals` makes (in start order), as of wall-clock
    /// `writtenMs`, on the file's own queue (`openIntervalsFile.wait()` waits for it).
    /// `intervals` runs there: it must hold values only. Not while another writer is taken
    /// to write this device's folder (`foreignWriter`): until a restart.
    func writeOpenIntervals(writtenMs: Int64, _ intervals: @escaping @Sendable () -> [Interval]) {
        guard foreignWriter == nil else { return }
        let folder: DirectoryDescriptor
        do throws(Errno) {
            // Its own descriptor: this one may be closed (a failed write) while it is used.
            folder = try directoryDescriptor().duplicate()
        } catch {
            return openIntervalsFile.failedToOpen(error)
        }
        openIntervalsFile.write(in: folder, writtenMs: writtenMs, intervals)
    }

    /// The same with `intervals` made already (tests).
    func writeOpenIntervals(_ intervals: [Interval], writtenMs: Int64) {
        writeOpenIntervals(writtenMs: writtenMs) { intervals }
    }

    /// How many times `open.json` was written, once the writes asked for are done: what tells
    /// a test how often.
    var openIntervalsWrites: Int { openIntervalsFile.writes }
}
