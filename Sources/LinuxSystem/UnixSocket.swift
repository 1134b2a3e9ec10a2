import CLinux
import Glibc

/// Unix stream sockets on `FileDescriptor`.
extension FileDescriptor {
    /// A new Unix stream socket, close-on-exec.
    package static func unixStreamSocket(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | (nonBlocking ? CInt(SOCK_NONBLOCK.rawValue) : 0)
        return FileDescriptor(rawValue: try Posix.call { socket(AF_UNIX, type, 0) })
    }

    /// A new Unix datagram socket, close-on-exec.
    package static func unixDatagramSocket() throws(Errno) -> FileDescriptor {
        let type = CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        return FileDescriptor(rawValue: try Posix.call { socket(AF_UNIX, type, 0) })
    }

    /// Sends one datagram to the socket at `path` (`@name` for an abstract one).
    package func send(_ bytes: [UInt8], toPath path: String) throws(Errno) {
        try Self.withAddress(path) { (address, length) throws(Errno) in
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(Errno) -> Int in
                    try Posix.call { sendto(rawValue, buffer.baseAddress, buffer.count, CInt(MSG_NOSIGNAL), address, length) }
                }
            }
            _ = try result.get()
        }
    }

    package func bind(toPath path: String) throws(Errno) {
        try Self.withAddress(path) { (address, length) throws(Errno) in
            _ = try Posix.call { Glibc.bind(rawValue, address, length) }
        }
    }

    package func listen(backlog: CInt) throws(Errno) {
        try Posix.call { Glibc.listen(rawValue, backlog) }
    }

    /// Connects to the socket at `path`. On a non-blocking socket `EINPROGRESS` is not an
    /// error here: it does not happen for Unix sockets that accept, and `EAGAIN` (a full
    /// backlog) is thrown.
    package func connect(toPath path: String) throws(Errno) {
        try Self.withAddress(path) { (address, length) throws(Errno) in
            _ = try Posix.call { Glibc.connect(rawValue, address, length) }
        }
    }

    /// Accepts a pending connection, non-blocking and close-on-exec from the start (hooks are
    /// started on another thread meanwhile: a connection close-on-exec only a moment later
    /// could leak into one); nil when none is waiting.
    package func accept() throws(Errno) -> FileDescriptor? {
        do {
            return FileDescriptor(rawValue: try Posix.call { clinux_accept_nonblocking_cloexec(rawValue) })
        } catch where error == .wouldBlock {
            return nil
        }
    }

    /// Sends what it can of `buffer` without raising `SIGPIPE` if the peer is gone.
    package func send(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Posix.call { Glibc.send(rawValue, buffer.baseAddress, buffer.count, CInt(MSG_NOSIGNAL)) }
    }

    /// Sends what it can of `bytes[offset...]`, as `send(_:)` does.
    package func send(_ bytes: [UInt8], from offset: Int) throws(Errno) -> Int {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(Errno) -> Int in try send(UnsafeRawBufferPointer(rebasing: buffer[offset...])) }
        }
        return try result.get()
    }

    /// Shuts both directions of the connection down: a read blocked on it in another thread
    /// returns.
    package func shutdown() {
        _ = Glibc.shutdown(rawValue, CInt(SHUT_RDWR))
    }

    /// Shuts the sending direction down: the peer reads end-of-file, and may still answer.
    package func shutdownWriting() throws(Errno) {
        try Posix.call { Glibc.shutdown(rawValue, CInt(SHUT_WR)) }
    }

    /// The process at the other end, from `SO_PEERCRED`.
    package func peerCredentials() throws(Errno) -> PeerCredentials {
        var credentials = PeerCredentials(pid: 0, uid: 0, gid: 0)
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        try Posix.call { getsockopt(rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length) }
        return credentials
    }

    /// The peer's supplementary groups, from `SO_PEERGROUPS` (Linux 4.13 and later).
    package func peerGroups() throws(Errno) -> [gid_t] {
        var groups = [gid_t](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            do {
                try Posix.call { getsockopt(rawValue, SOL_SOCKET, SO_PEERGROUPS, &groups, &length) }
                return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size))
            } catch where error == Errno(ERANGE) {
                groups = [gid_t](repeating: 0, count: Int(length) / MemoryLayout<gid_t>.size + 1)
            }
        }
    }

    /// The path this Unix socket is bound to (`getsockname`), `@name` for an abstract one;
    /// nil for an unnamed one.
    package func boundPath() throws(Errno) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        try withUnsafeMutablePointer(to: &address) { (pointer) throws(Errno) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(Errno) in
                _ = try Posix.call { getsockname(rawValue, address, &length) }
            }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        guard address.sun_family == sa_family_t(AF_UNIX), Int(length) > pathOffset else { return nil }
        let count = min(Int(length) - pathOffset, Self.maximumSocketPathLength + 1)
        var bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(count)) }
        if bytes.first == 0 {
            // Abstract: the name is exactly the rest of the address.
            bytes[0] = UInt8(ascii: "@")
            return String(decoding: bytes, as: UTF8.self)
        }
        if let end = bytes.firstIndex(of: 0) { bytes.removeSubrange(end...) }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The longest path a Unix socket address holds, without its terminating NUL.
    package static let maximumSocketPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Calls `body` with a `sockaddr_un` for `path`; a path starting with `@` names an
    /// abstract socket. Throws `nameTooLong` for a path that does not fit.
    package static func withAddress<Result>(
        _ path: String,
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Errno) -> Result
    ) throws(Errno) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        guard !bytes.isEmpty, bytes.count <= maximumSocketPathLength, !bytes.dropFirst().contains(0) else {
            throw Errno.nameTooLong
        }
        withUnsafeMutableBytes(of: &address.sun_path) { pathBytes in
            pathBytes.copyBytes(from: bytes)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        // An abstract name's length is exact; a path's includes its terminating NUL.
        let length = socklen_t(pathOffset + bytes.count + (isAbstract ? 0 : 1))
        return try withUnsafePointer(to: &address) { (pointer) throws(Errno) -> Result in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(Errno) -> Result in
                try body(address, length)
            }
        }
    }
}
