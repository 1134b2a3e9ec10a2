import Dispatch
import Glibc
import LinuxSystem
import StopWatchCore
import Varlink

/// Accepts clients on the listening socket and keeps their connections.
///
/// `@unchecked Sendable` is safe here: all stored state is read and written only on
/// `queue` (a serial queue), where the serving loop runs every handler of the server.
final class VarlinkServer: @unchecked Sendable {
    private let listener: FileDescriptor
    private let queue: DispatchQueue
    /// Serves the listener and the connections once `start`ed (and the countdowns' timers,
    /// `LoopTimer`, from before).
    private let loop: ServingLoop
    private let service: VarlinkService
    private let policy: PeerPolicy
    private let limits: ConnectionLimits
    private let maximumConnections: Int
    /// The share of `maximumConnections` one user other than root and the daemon's may hold.
    private let maximumConnectionsPerUser: Int
    private let logger: Logger
    /// One buffer for every read: they all happen on `queue`, one at a time.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// The listener's registration with `loop`, while started.
    private var listenerToken: ServingLoop.Token?
    private var isAccepting = false
    private var connections: [Int: Connection] = [:]
    /// Connections held by each user held to a share (`PeerPolicy.isShared`).
    private var connectionsByUser: [uid_t: Int] = [:]
    private var nextConnectionID = 1
    /// At the connection limit since the last warning: warn once per episode.
    private var isRefusing = false
    /// Called on the queue when a connection is admitted or closed (exit on idle counts
    /// them); set before `start`.
    var connectionsChanged: () -> Void = {}

    /// Clients connected now.
    var connectionCount: Int { connections.count }

    init(
        listener: FileDescriptor,
        queue: DispatchQueue,
        loop: ServingLoop,
        service: VarlinkService,
        policy: PeerPolicy,
        limits: ConnectionLimits,
        maximumConnections: Int,
        maximumConnectionsPerUser: Int,
        logger: Logger
    ) {
        self.listener = listener
        self.queue = queue
        self.loop = loop
        self.service = service
        self.policy = policy
        self.limits = limits
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerUser = maximumConnectionsPerUser
        self.logger = logger
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Starts accepting clients. `onFailure` is called on the queue if the server can no
    /// longer learn which sockets are ready (only a bug does that): the daemon is to stop.
    /// Call on the queue.
    func start(onFailure: @escaping @Sendable (String) -> Void) throws(Errno) {
        loop.onFailure = onFailure
        do {
            listenerToken = try loop.add(listener, for: .readable) { [weak self] _ in self?.acceptPending() }
        } catch {
            loop.stop()
            throw error
        }
        isAccepting = true
    }

    /// Stops accepting and closes every connection.
    func stop() {
        if let listenerToken {
            loop.remove(listenerToken)
            self.listenerToken = nil
        }
        isAccepting = false
        for connection in Array(connections.values) { connection.close() }
        loop.stop()
    }

    /// At most this many accepts per wake-up: then the other sockets ready, and work queued
    /// meanwhile (ticks, the watchdog), run before the listener's next turn (it is reported
    /// again while clients wait), however fast clients connect.
    static let acceptsPerWakeUp = 16

    private func acceptPending() {
        for _ in 0..<Self.acceptsPerWakeUp {
            let socket: FileDescriptor
            do {
                guard let accepted = try listener.accept() else { return }
                socket = accepted
            } catch where error == .connectionAborted {
                continue
            } catch {
                // Out of descriptors or memory: pause rather than spin on the ready listener.
                logger.warning("accept failed with \(connections.count) clients: \(error); not accepting for 100ms")
                pauseAccepting(for: .milliseconds(100))
                return
            }
            admit(socket)
        }
    }

    private func admit(_ socket: FileDescriptor) {
        guard let peer = try? socket.peerCredentials(), policy.allows(peer, on: socket) else {
            let peer = (try? socket.peerCredentials()).map { "uid \($0.uid), pid \($0.pid)" } ?? "unknown peer"
            logger.notice("refused \(peer): not root, this user, or in the allowed group")
            refuse(socket, with: .permissionDenied)
            return
        }
        let isShared = policy.isShared(peer)
        if isShared, connectionsByUser[peer.uid, default: 0] >= maximumConnectionsPerUser {
            logger.notice("refused uid \(peer.uid), pid \(peer.pid): it holds its share of \(maximumConnectionsPerUser) connections")
            refuse(socket, with: .tooManyConnections(limit: maximumConnectionsPerUser))
            return
        }
        guard connections.count < maximumConnections else {
            if !isRefusing {
                isRefusing = true
                logger.warning("connection limit of \(maximumConnections) reached; refusing new clients")
            }
            refuse(socket, with: .tooManyConnections(limit: maximumConnections))
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let context = ConnectionContext(loop: loop, service: service, limits: limits, logger: logger, readBuffer: readBuffer)
        let connection = Connection(id: id, socket: socket, context: context) { [weak self] closed in
            guard let self else { return }
            self.connections[closed.id] = nil
            if isShared { self.connectionsByUser[peer.uid, default: 1] -= 1 }
            if self.connectionsByUser[peer.uid] == 0 { self.connectionsByUser[peer.uid] = nil }
            // The episode ends once a tenth of the slots are free again: under a flood that
            // keeps it at the limit, one warning, not one per client that leaves.
            if self.connections.count <= self.maximumConnections - max(self.maximumConnections / 10, 1) {
                self.isRefusing = false
            }
            // The last client gone: hand the memory the busy time needed back to the system.
            if self.connections.isEmpty { Memory.releaseFree() }
            self.connectionsChanged()
        }
        do {
            try connection.start()
        } catch {
            logger.warning("refused uid \(peer.uid), pid \(peer.pid): cannot wait for its calls: \(error)")
            refuse(socket, with: .protocolError("the daemon cannot take this connection now (\(error)); try again"))
            return
        }
        connections[id] = connection
        if isShared { connectionsByUser[peer.uid, default: 0] += 1 }
        connectionsChanged()
    }

    /// Tells the client why (as far as the socket buffer takes it at once) and closes.
    private func refuse(_ socket: FileDescriptor, with error: VarlinkError) {
        let message = VarlinkReply(error).message
        _ = try? socket.send(message, from: 0)
        socket.close()
    }

    private func pauseAccepting(for duration: Duration) {
        guard isAccepting, let listenerToken else { return }
        isAccepting = false
        loop.setInterest([], for: listenerToken)
        _ = loop.schedule(at: loop.now() + duration) { [weak self] in
            guard let self, !self.isAccepting, let token = self.listenerToken else { return }
            self.isAccepting = true
            self.loop.setInterest(.readable, for: token)
        }
    }
}
