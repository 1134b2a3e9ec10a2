import Dispatch
import StopWatchCore
import StopwatchProtocol
import Varlink

/// The named stopwatches, one `StopWatchUseCase` each.
///
/// A name is *created* by Start or Toggle and listed until removed; the limit counts these.
/// A name that is only watched gets an entry too, so its watchers see it when it is
/// started; that entry goes when its last watcher does. There are at most as many of those
/// as connections, since each connection watches at most one name.
///
/// Not thread-safe: it belongs to the server's queue.
final class StopwatchRegistry {
    private struct Entry {
        let useCase: StopWatchUseCase
        var isCreated: Bool
        /// Its watchers, while it has any.
        var fanOut: WatchFanOut?
        var watchers: Int { fanOut?.count ?? 0 }
    }

    /// By exact name (`StopwatchKey`): two spellings of "café" are two stopwatches.
    private var entries: [StopwatchKey: Entry] = [:]
    private(set) var createdCount = 0
    let limit: Int
    private var nextWatcherID = 1
    private let makeUseCase: (StopWatchSnapshot) -> StopWatchUseCase
    /// The server's queue, where watchers are told of updates.
    private let queue: DispatchQueue
    /// The id of each counting stopwatch's counting interval (SPEC §3: an interval has its id
    /// from its start, shown by History while it counts and written at its end). Kept here,
    /// by the daemon, beside the stopwatch rather than in the core's snapshot, which knows
    /// nothing of the history; the state store writes it in the stopwatch's file
    /// (`interval_id`), and the restore puts it back. Set by `StopwatchService` when an
    /// interval begins, cleared when it ends or the stopwatch is removed.
    private var intervalIDs: [StopwatchKey: String] = [:]

    init(limit: Int, queue: DispatchQueue, makeUseCase: @escaping (StopWatchSnapshot) -> StopWatchUseCase) {
        self.limit = limit
        self.queue = queue
        self.makeUseCase = makeUseCase
    }

    /// The stopwatch `name` if it was created.
    func created(_ name: String) -> StopWatchUseCase? {
        guard let entry = entries[StopwatchKey(name)], entry.isCreated else { return nil }
        return entry.useCase
    }

    /// The stopwatch `name`, created now if it was not.
    func create(_ name: String, from snapshot: StopWatchSnapshot = .stopped) throws(VarlinkError) -> StopWatchUseCase {
        if let entry = entries[StopwatchKey(name)], entry.isCreated { return entry.useCase }
        guard createdCount < limit else { throw .tooManyStopwatches(limit: limit) }
        createdCount += 1
        if let entry = entries[StopwatchKey(name)] {
            entries[StopwatchKey(name)]!.isCreated = true
            return entry.useCase
        }
        let useCase = makeUseCase(snapshot)
        entries[StopwatchKey(name)] = Entry(useCase: useCase, isCreated: true)
        return useCase
    }

    /// Makes a new watcher receive the states of `name`, on the server's queue: the current
    /// one first (perhaps before this returns), then every change and tick, each with its
    /// event. An entry is made for a name that has none. Returns the watcher's id, for
    /// `endWatching`.
    func beginWatching(_ name: String, _ receive: @escaping WatchFanOut.Receive) -> Int {
        let watcher = nextWatcherID
        nextWatcherID += 1
        var entry = entries[StopwatchKey(name)] ?? Entry(useCase: makeUseCase(.stopped), isCreated: false)
        let fanOut = entry.fanOut ?? WatchFanOut(of: entry.useCase, on: queue)
        entry.fanOut = fanOut
        entries[StopwatchKey(name)] = entry
        // Stored first: the newest state may reach the watcher at once, and its connection
        // may close (and end its watch) on the spot.
        fanOut.add(watcher, receive)
        return watcher
    }

    /// Gives `name`'s watchers now, on this thread, the states its use case has stored for
    /// them and not yet delivered (which would reach them in a later turn of the queue).
    func deliverToWatchersNow(_ name: String) {
        entries[StopwatchKey(name)]?.fanOut?.deliverPending()
    }

    func endWatching(_ name: String, watcher: Int) {
        guard var entry = entries[StopwatchKey(name)], let fanOut = entry.fanOut else { return }
        fanOut.remove(watcher)
        if fanOut.count == 0 { entry.fanOut = nil }
        entries[StopwatchKey(name)] = entry.fanOut == nil && !entry.isCreated ? nil : entry
    }

    /// The id of `name`'s counting interval, if it counts.
    func intervalID(of name: String) -> String? {
        intervalIDs[StopwatchKey(name)]
    }

    /// Sets (nil: clears) the id of `name`'s counting interval.
    func setIntervalID(_ id: String?, of name: String) {
        intervalIDs[StopwatchKey(name)] = id
    }

    /// Deletes `name`. Its watchers stay, are told `removed`, and from then on watch a
    /// stopwatch never started in its place. Returns whether it existed.
    @discardableResult
    func remove(_ name: String) -> Bool {
        guard let entry = entries[StopwatchKey(name)], entry.isCreated else { return false }
        intervalIDs[StopwatchKey(name)] = nil
        createdCount -= 1
        // Its tick timer goes with it, once nothing subscribes (the fan-out lets go below).
        if let fanOut = entry.fanOut {
            let successor = makeUseCase(.stopped)
            // In place before the watchers are told: one that leaves as it is told (its
            // client gone) ends its watch on this entry, and the last one out frees it.
            entries[StopwatchKey(name)] = Entry(useCase: successor, isCreated: false, fanOut: fanOut)
            fanOut.removed(replacedBy: successor)
        } else {
            entries[StopwatchKey(name)] = nil
        }
        return true
    }

    /// The created stopwatches, sorted by name's UTF-8 bytes (code point order: stable, and
    /// the same whatever the locale or Unicode version).
    var createdStopwatches: [(name: String, useCase: StopWatchUseCase)] {
        entries.filter(\.value.isCreated).sorted { $0.key < $1.key }.map { ($0.key.name, $0.value.useCase) }
    }

    /// The created stopwatches in no particular order: for what sorts them otherwise (the
    /// open intervals, by start), without the cost of ordering names.
    var createdInAnyOrder: [(name: String, useCase: StopWatchUseCase)] {
        entries.compactMap { $0.value.isCreated ? ($0.key.name, $0.value.useCase) : nil }
    }

    var countingCount: Int { entries.values.count { $0.isCreated && $0.useCase.state.current.state.isCounting } }
    var watcherCount: Int { entries.values.reduce(0) { $0 + $1.watchers } }
}
