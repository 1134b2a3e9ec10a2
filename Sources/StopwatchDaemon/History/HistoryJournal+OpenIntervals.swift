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
    ///
    /// `intervals` are in start order. Never larger than the other devices read
    /// (`PeerDevices.openFileLimit`): when they do not fit, those that began latest and fit
    /// are written (logged once until they fit again).
    func writeOpenIntervals(_ intervals: [Interval], writtenMs: Int64) {
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
            if !openIntervalsCut {
                logger.warning("\(intervals.count) intervals count here, more than \(PeerDevices.openFileName) may hold for other devices to read (\(PeerDevices.openFileLimit / 1024 / 1024) MiB): only the \(encoded.count) that began latest are written, until they fit")
            }
            openIntervalsCut = true
        } else {
            openIntervalsCut = false
        }
        let listed = Array(encoded.reversed().joined(separator: [UInt8(ascii: ",")]))
        // Another writer's folder (`foreignWriter`): not written to until a restart.
        guard listed != openIntervalsWritten, foreignWriter == nil else { return }
        let bytes = head + listed + tail
        do throws(Errno) {
            let folder = try directoryDescriptor()
            try? folder.remove(Self.openTemporaryName)
            let file = try folder.openFile(Self.openTemporaryName, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
            // Closed once, whatever fails (a second close could close a descriptor another
            // thread, a hook's spawn, was given the number of meanwhile).
            let written = Result { () throws(Errno) in try file.writeAll(bytes) }
            file.close()
            do throws(Errno) {
                try written.get()
                try folder.rename(Self.openTemporaryName, to: PeerDevices.openFileName)
            } catch {
                try? folder.remove(Self.openTemporaryName)
                throw error
            }
            openIntervalsWritten = listed
            openIntervalsFailing = false
            openIntervalsWrites += 1
        } catch {
            guard !openIntervalsFailing else { return }
            openIntervalsFailing = true
            logger.warning("cannot write \(PeerDevices.openFileName) in the history's device folder (\(error)): other devices do not see what counts here until it can be")
        }
    }
}
