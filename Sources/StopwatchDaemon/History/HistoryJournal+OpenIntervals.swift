import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// `open.json` in this device's folder: its counting intervals, for the other devices'
/// `History` (SPEC §4 "History across devices"; read by their `PeerDevices.openIntervals`).
extension HistoryJournal {
    static let openTemporaryName = ".open.json.tmp"

    /// Replaces `open.json` with `intervals` (`{"written_ms":W,"intervals":[{"id","name",
    /// "start_ms","elapsed_ms"[,"note"]}…]}`, no `end_ms`, no `device`), atomically: a
    /// temporary file made exclusively without following a link, renamed over. `writtenMs` is
    /// the wall clock the elapsed times are as of: the file is written at starts and stops
    /// only, so a reader adds the time since (`PeerDevices.openIntervals`). Not flushed: it is
    /// a view for the other devices, rebuilt at every start and stop and at the daemon's start,
    /// so a crash that loses it loses nothing. Skipped when `intervals` is what was written
    /// last (its elapsed times included). A failure is logged once per episode: writing the
    /// history itself says more.
    func writeOpenIntervals(_ intervals: [Interval], writtenMs: Int64) {
        var listed: [UInt8] = []
        for (index, interval) in intervals.enumerated() {
            if index > 0 { listed.append(UInt8(ascii: ",")) }
            var open = interval
            open.endMs = nil
            HistoryLine.encodeObject(open, device: nil, into: &listed)
        }
        // Another writer's folder (`foreignWriter`): not written to until a restart.
        guard listed != openIntervalsWritten, foreignWriter == nil else { return }
        let bytes = Array(#"{"written_ms":\#(writtenMs),"intervals":["#.utf8) + listed + Array("]}\n".utf8)
        do throws(Errno) {
            let folder = try directoryDescriptor()
            try? folder.remove(Self.openTemporaryName)
            let file = try folder.openFile(Self.openTemporaryName, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
            do throws(Errno) {
                try file.writeAll(bytes)
                file.close()
                try folder.rename(Self.openTemporaryName, to: PeerDevices.openFileName)
            } catch {
                file.close()
                try? folder.remove(Self.openTemporaryName)
                throw error
            }
            openIntervalsWritten = listed
            openIntervalsFailing = false
        } catch {
            guard !openIntervalsFailing else { return }
            openIntervalsFailing = true
            logger.warning("cannot write \(PeerDevices.openFileName) in the history's device folder (\(error)): other devices do not see what counts here until it can be")
        }
    }
}
