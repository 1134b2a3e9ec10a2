import StopWatchCore
import StopwatchProtocol
import Varlink

/// The last `Watch` reply made, so that the watchers of one stopwatch share one encoding of
/// each update instead of making a thousand identical ones.
///
/// An update reports the elapsed time its snapshot recorded (at the tick, or at the command)
/// rather than at the moment it is written, so every watcher gets the same bytes.
///
/// Not thread-safe: it belongs to the server's queue.
final class WatchReplyCache {
    private var last: (name: String, snapshot: StopWatchSnapshot, event: WatchEvent, message: [UInt8])?

    func message(for name: String, _ snapshot: StopWatchSnapshot, _ event: WatchEvent) -> [UInt8] {
        if let last, last.name.utf8.elementsEqual(name.utf8), last.snapshot == snapshot, last.event == event { return last.message }
        // Where the snapshot was taken: the clock reading at which it was this state.
        let takenAt = (snapshot.origin ?? .zero) + snapshot.state.elapsed
        let update = WatchUpdate(stopwatch: Stopwatch(name: name, snapshot: snapshot, at: takenAt), event: event)
        let message = update.replyMessage(continues: true)
        last = (name, snapshot, event, message)
        return message
    }
}
