import LinuxSystem
/// The memory all `History` streams hold together, about `limit` bytes at most
/// (`--history-memory`, SPEC §3): what their replies hold from when they are encoded until
/// the connection's socket has taken them. A stream asks for a grant before it encodes a
/// reply, builds the reply within it, and gives the bytes back once its connection has
/// written the reply. While the budget is spent a stream that asks waits: its reading and
/// encoding pause, and its connection stays open. So readers that do not read, however
/// many, hold the budget, not more.
///
/// Who gets what:
/// - A grant is at most the asker's share, the limit over the streams open (at least
///   `minimumGrant`, at most `maximumGrant`): the more streams, the smaller their replies.
/// - While the budget has room for `minimumGrant`, a grant is made at once from what is left.
///   Otherwise the asker waits, and those waiting are served in the order they asked, as
///   memory comes back: none is overtaken by one that asked later.
/// - A stream that holds nothing is granted `minimumGrant` at once, even past the limit:
///   readers that do not read may keep the whole budget for as long as they like, and must
///   not stop one that reads (it gets small replies meanwhile). A stream that holds all the
///   memory in use is granted it too, so a reply larger than the whole budget completes.
///   Each stream adds at most one such grant (plus one interval) to the limit.
/// - A reply that cannot be cut (a call without `more`: its intervals in one reply, or
///   `TooManyResults`) grows grant by grant; only one such reply grows at a time, the others
///   wait before their first grant (`whole`). Two that each held part of the budget while
///   waiting for the rest would wait for each other for ever. The one growing is granted
///   at once, past the limit if need be: readers that stopped reading never give the budget
///   back, and it must not wait for them (nor the others queued behind it). So the limit
///   is passed by at most that one reply, no more than `batchSize` intervals (about 1 MB at
///   the default 10,000).
///
/// Grants are told to the account's `whenGranted` (for a stream that waited), synchronously
/// from the call that gave the memory back.
///
/// Not thread-safe: it belongs to the server's queue, with the streams.
final class HistoryMemory {
    /// The memory the streams share, in bytes.
    let limit: Int
    /// What a reply is granted at least (about 180 intervals).
    static let minimumGrant = 16 * 1024
    /// What one reply is granted at most: room for 10,000 intervals of the longest names.
    static let maximumGrant = 4 * 1024 * 1024

    /// Granted and not given back, by all accounts.
    private(set) var used = 0 {
        didSet { peak = max(peak, used) }
    }
    /// The most `used` ever was: what tells a test the budget held.
    private(set) var peak = 0
    private var openAccounts = 0
    /// Accounts waiting for a grant, in the order they asked.
    private var waiting: [Account] = []
    /// Accounts waiting to begin a reply that cannot be cut, in the order they asked.
    private var waitingForWhole: [Account] = []
    /// The account whose reply that cannot be cut is growing, if any.
    private var wholeReplyOwner: Account?

    /// The one buffer every stream reads the month files through: a read and the parse of
    /// its lines happen in one turn of the queue, so no two streams use it at once.
    let readBuffer: UnsafeMutableRawBufferPointer

    init(limit: Int, readBufferSize: Int = HistoryStream.bufferSize) {
        self.limit = max(limit, Self.minimumGrant)
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        Self.giveLargeBlocksBack()
    }

    /// Makes the C library give a reply's memory back to the system when the reply is
    /// written. By default glibc serves blocks of 128 KiB and more from their own mappings,
    /// but the first such block freed raises that threshold to its size, so every later
    /// reply (a megabyte or more) comes from the heap and stays resident after it is freed,
    /// scattered among small blocks that trimming cannot return: a report over a million
    /// intervals left the daemon 10 MiB larger than its replies ever were at once. A fixed
    /// threshold keeps replies in mappings of their own, unmapped when freed. Process-wide,
    /// and set once: every other block of 128 KiB or more is mapped on its own too (the
    /// correction index's arrays, the table of ten thousand stopwatches, a large request's
    /// bytes), which costs a mapping and its page faults when it is made; those are made
    /// rarely, and the replies, made a hundred times per report, are what it is for.
    private static let largeBlocksGivenBack: Void = {
        Memory.mapBlocks(ofAtLeast: 128 * 1024)
    }()

    private static func giveLargeBlocksBack() {
        _ = largeBlocksGivenBack
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Streams open: those the budget is shared among.
    var accountCount: Int { openAccounts }
    /// Accounts waiting for a grant (for a reply that cannot be cut, too).
    var waitingCount: Int { waiting.count + waitingForWhole.count }

    /// An account for one stream; `close()` it when the stream ends.
    func openAccount() -> Account {
        openAccounts += 1
        return Account(memory: self)
    }

    /// One stream's part of the budget.
    final class Account {
        fileprivate let memory: HistoryMemory
        /// Bytes of replies it holds: granted for the one it builds, and those not written yet.
        fileprivate(set) var held = 0
        /// Bytes it holds beside replies (what it will send last, kept from the call on): in
        /// the memory used, but not in `held`, so that such a stream still counts as holding
        /// nothing once its replies are written.
        fileprivate(set) var fixed = 0
        /// Told the bytes granted to a request that had to wait.
        var whenGranted: (Int) -> Void = { _ in }
        fileprivate var status = Status.open

        fileprivate enum Status {
            case open
            /// In `waiting`.
            case waiting
            /// In `waitingForWhole`.
            case waitingForWhole
            case closed
        }

        fileprivate init(memory: HistoryMemory) {
            self.memory = memory
        }

        /// Asks for the bytes of a reply, or of more of it: the grant now, or nil when the
        /// request waits (then `whenGranted` is told). `whole`: for a reply that cannot be
        /// cut, which takes its turn among those first.
        func request(whole: Bool = false) -> Int? {
            memory.request(self, whole: whole)
        }

        /// Counts `bytes` more than were granted: a reply whose one interval outgrew a small
        /// grant. Never waits.
        func take(_ bytes: Int) {
            memory.charge(self, bytes)
        }

        /// Counts `bytes` held beside replies (see `fixed`). Never waits.
        func takeFixed(_ bytes: Int) {
            guard status != .closed, bytes > 0 else { return }
            fixed += bytes
            memory.used += bytes
        }

        /// Gives back `bytes` of replies: unused of a grant, or a reply written.
        func giveBack(_ bytes: Int) {
            memory.giveBack(self, bytes)
        }

        /// Gives back `bytes` of what `takeFixed` counted (a buffer freed before the stream ends).
        func giveBackFixed(_ bytes: Int) {
            let given = min(bytes, fixed)
            guard given > 0 else { return }
            fixed -= given
            memory.used -= given
            memory.serve()
        }

        /// Gives back what `takeFixed` counted.
        func giveBackFixed() {
            guard fixed > 0 else { return }
            memory.used -= fixed
            fixed = 0
            memory.serve()
        }

        /// The reply that could not be cut is complete: the next such one may grow.
        func endWholeReply() {
            memory.endWholeReply(self)
        }

        /// Gives back everything and leaves the queue. Idempotent.
        func close() {
            memory.close(self)
        }
    }

    // MARK: The rules

    private func request(_ account: Account, whole: Bool) -> Int? {
        guard account.status == .open else { return nil }
        if whole, let owner = wholeReplyOwner, owner !== account {
            account.status = .waitingForWhole
            waitingForWhole.append(account)
            return nil
        }
        if whole { wholeReplyOwner = account }
        if let bytes = grant(to: account, queued: false) {
            charge(account, bytes)
            return bytes
        }
        account.status = .waiting
        waiting.append(account)
        return nil
    }

    /// What `account` may be granted now, or nil while it is to wait.
    private func grant(to account: Account, queued: Bool) -> Int? {
        let share = min(max(limit / max(openAccounts, 1), Self.minimumGrant), Self.maximumGrant)
        // Those who asked first are served first: a newcomer takes from the room left only
        // when nobody waits.
        if queued || waiting.isEmpty, used + Self.minimumGrant <= limit {
            return min(share, limit - used)
        }
        if account.held == 0 || account.held + account.fixed == used || account === wholeReplyOwner {
            return Self.minimumGrant
        }
        return nil
    }

    fileprivate func charge(_ account: Account, _ bytes: Int) {
        guard account.status != .closed, bytes > 0 else { return }
        account.held += bytes
        used += bytes
    }

    private func giveBack(_ account: Account, _ bytes: Int) {
        guard account.status != .closed, bytes > 0 else { return }
        let given = min(bytes, account.held)
        account.held -= given
        used -= given
        // A waiting stream whose last reply has just been written holds nothing now.
        if account.held == 0, account.status == .waiting, let bytes = grant(to: account, queued: false) {
            waiting.removeAll { $0 === account }
            account.status = .open
            charge(account, bytes)
            account.whenGranted(bytes)
        }
        serve()
    }

    private func endWholeReply(_ account: Account) {
        guard wholeReplyOwner === account else { return }
        wholeReplyOwner = nil
        // The next reply that cannot be cut may begin: it asks as any other does.
        guard !waitingForWhole.isEmpty else { return }
        let next = waitingForWhole.removeFirst()
        next.status = .open
        wholeReplyOwner = next
        if let bytes = grant(to: next, queued: false) {
            charge(next, bytes)
            next.whenGranted(bytes)
        } else {
            next.status = .waiting
            waiting.append(next)
        }
    }

    private func close(_ account: Account) {
        guard account.status != .closed else { return }
        used -= account.held + account.fixed
        account.held = 0
        account.fixed = 0
        account.status = .closed
        waiting.removeAll { $0 === account }
        waitingForWhole.removeAll { $0 === account }
        openAccounts -= 1
        endWholeReply(account)
        serve()
    }

    /// Grants to those waiting, in order, while there is room for the first.
    fileprivate func serve() {
        while let first = waiting.first, let bytes = grant(to: first, queued: true) {
            waiting.removeFirst()
            first.status = .open
            charge(first, bytes)
            first.whenGranted(bytes)
        }
    }
}
