import StopWatchCore
import StopwatchProtocol
import Varlink

/// One `Watch` call's stream: the states of one stopwatch, the current one first.
///
/// Updates the connection has not pulled yet wait in a `WatchBacklog`, where ticks merge
/// and changes queue up to a limit; past it the stream ends with `WatchTooSlow`.
///
/// Not thread-safe: it belongs to the server's queue, where the registry delivers.
final class StopwatchWatch: VarlinkReplyStream {
    /// What the watches of one service share.
    struct Context {
        let registry: StopwatchRegistry
        /// One encoding of each update for all the watchers of a stopwatch.
        let replies = WatchReplyCache()
        let clock: any StopWatchClock
        /// Changes that may wait for a slow watcher before its stream ends.
        let maximumPendingEvents: Int
        let logger: Logger
        /// Called when a watcher begins and ends (the status line counts watchers).
        let watchersChanged: () -> Void
    }

    private let name: String
    private let context: Context
    private var backlog: WatchBacklog
    /// The registry's id for this watcher, while it watches.
    private var watcher: Int?
    private var ready: (() -> Void)?
    /// The first state a watch gets (`current`) is the stopwatch as it was last updated,
    /// perhaps long ago: its elapsed time is computed when written. Later ones are fresh.
    private var sentFirst = false
    /// Set once the backlog overflowed: the stream's last word.
    private var tooSlow: VarlinkError?

    init(name: String, context: Context) {
        self.name = name
        self.context = context
        backlog = WatchBacklog(limit: context.maximumPendingEvents)
    }

    func start(ready: @escaping () -> Void) {
        self.ready = ready
        let watcher = context.registry.beginWatching(name) { [weak self] snapshot, event in self?.received(snapshot, event) }
        context.watchersChanged()
        // Should the connection end the stream while it starts (the first state may come at
        // once), `cancel` would not know the id yet. Connection does not (it pulls only
        // after `start`), but a stream must not rely on that.
        guard self.ready != nil else {
            context.registry.endWatching(name, watcher: watcher)
            context.watchersChanged()
            return
        }
        self.watcher = watcher
    }

    func takeEnd() -> VarlinkError? {
        defer { tooSlow = nil }
        return tooSlow
    }

    func next() -> VarlinkStreamItem? {
        if let end = takeEnd() { return .end(end) }
        guard let (snapshot, event) = backlog.removeFirst() else { return nil }
        guard sentFirst else {
            sentFirst = true
            let update = WatchUpdate(stopwatch: Stopwatch(name: name, snapshot: snapshot, at: context.clock.instant()), event: .current)
            return .message(update.replyMessage(continues: true))
        }
        return .message(context.replies.message(for: name, snapshot, event))
    }

    func cancel() {
        ready = nil
        guard let watcher else { return }
        self.watcher = nil
        context.registry.endWatching(name, watcher: watcher)
        context.watchersChanged()
    }

    private func received(_ snapshot: StopWatchSnapshot, _ event: WatchEvent) {
        // `ready` is set before watching begins (the first state may come at once) and
        // cleared by `cancel`.
        guard ready != nil, tooSlow == nil else { return }
        if !backlog.append(snapshot, event) {
            context.logger.notice("a watcher of '\(name)' disconnected: it fell more than \(backlog.limit) changes behind")
            backlog.removeAll()
            tooSlow = .watchTooSlow(pending: backlog.limit)
        }
        ready?()
    }
}
