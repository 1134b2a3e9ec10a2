import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The history folder's layout, format 2 (SPEC §4 "History across devices",
/// docs/HISTORY.md): `stopwatchd-history.json` (`{"format":2}`) marks it; each device writes
/// only its own folder `DEVICE-ID/`, which holds its months and `device.json`.
///
/// `prepare` makes it so, once, at start: it refuses a folder marked with another format,
/// makes this device's folder and `device.json`, moves the months a daemon of the release
/// before left directly in the folder (`YYYY-MM.jsonl`, format 1) into the device's folder,
/// and writes the marker last. A crash at any step leaves a state the next start finishes:
/// without the marker, the months still at the top are moved then; a move is one
/// `renameat2(RENAME_NOREPLACE)`, so a month is in one place or the other, never both,
/// never half; a name already in the device's folder is never replaced (see `migrate`).
///
/// Not thread-safe: used at start, then on the server's queue.
struct HistoryLayout {
    static let markerName = "stopwatchd-history.json"
    static let deviceFileName = "device.json"
    static let format = 2

    /// 32 lowercase hex digits.
    let deviceID: String
    let deviceName: String
    let hostName: String
    let trust: DirectoryTrust
    let logger: Logger

    /// Why a history folder is not used.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        /// The system's error, when one is the reason.
        var errno: Errno?

        init(description: String, errno: Errno? = nil) {
            self.description = description
            self.errno = errno
        }
    }

    /// Makes the folder format 2 with this device's folder in it (see the type's comment),
    /// and returns that folder, open. `path` names the folder in messages. `lock` runs once
    /// the device folder is there and before anything is changed (`device.json`, moves, the
    /// marker): a second daemon refused by the lock changes nothing.
    func prepare(
        _ root: DirectoryDescriptor, path: String, lock: () throws(Refusal) -> Void
    ) throws(Refusal) -> DirectoryDescriptor {
        let marked = try readMarker(root, path: path)
        let device = try deviceFolder(in: root, path: path)
        do throws(Refusal) {
            try lock()
        } catch {
            device.close()
            throw error
        }
        do throws(Errno) {
            try writeDeviceFile(in: device)
        } catch {
            // Only a description for other devices' readers: never what blocks writing.
            logger.error("cannot write \(path)/\(deviceID)/\(Self.deviceFileName): \(error); tried again at the next start")
        }
        guard !marked else {
            warnOfMonthsLeft(in: root, path: path)
            return device
        }
        let migration: Migration
        do throws(Errno) {
            migration = try migrate(from: root, to: device, path: path)
            if case .complete = migration {
                try replace(Self.markerName, in: root, with: Array(#"{"format":2}"#.utf8) + [UInt8(ascii: "\n")])
                // No news at a first start (the Quick start's terminal shows every line); a
                // move of the last release's months is told by `migrate`.
                logger.debug("the history folder \(path) is in format 2 now (\(Self.markerName) written)")
            }
        } catch {
            device.close()
            throw Refusal(description: "cannot prepare the history folder \(path): \(error)", errno: error)
        }
        guard case .cannotMove(let name, let error) = migration else { return device }
        device.close()
        // Not an I/O problem a retry at each write would mend: the file system moves no file
        // between these folders (no hard link for the fallback, another mount).
        throw Refusal(
            description: "cannot move \(path)/\(name) into the device folder \(path)/\(deviceID)/ (\(error): the file system does not allow it); move the months YYYY-MM.jsonl at the top of \(path) into \(path)/\(deviceID)/ by hand, then start stopwatchd again"
        )
    }

    /// Whether the marker is there; throws a refusal for one of another format.
    private func readMarker(_ root: DirectoryDescriptor, path: String) throws(Refusal) -> Bool {
        let file: FileDescriptor
        let bytes: [UInt8]
        do throws(Errno) {
            do throws(Errno) {
                file = try root.openFile(Self.markerName, [.readOnly, .noFollow, .nonBlocking])
            } catch where error == .noEntry {
                return false
            }
            defer { file.close() }
            guard try file.status().kind == .regular else { throw Errno(EINVAL) }
            bytes = try file.readAll(limit: 4096)
        } catch {
            throw Refusal(description: "cannot read \(path)/\(Self.markerName): \(error == Errno(EINVAL) ? "not a regular file" : "\(error)")")
        }
        guard !bytes.isEmpty else {
            throw Refusal(description: "\(path)/\(Self.markerName) is empty (it should hold {\"format\":2}); refusing to write a history there")
        }
        guard let json = try? JSONParser.parse(bytes), case .object(let object) = json, case .int(let format)? = object["format"] else {
            throw Refusal(description: "\(path)/\(Self.markerName) does not say which format the history folder is in (it should hold {\"format\":2}); refusing to write a history there")
        }
        guard format == Self.format else {
            throw Refusal(description: "the history folder \(path) is in format \(format), which this stopwatchd does not know (it knows format 2): a newer version made it; refusing to write a history there")
        }
        return true
    }

    /// This device's folder, made (0700) if missing, trusted as the state directory is.
    func deviceFolder(in root: DirectoryDescriptor, path: String, creating: Bool = true) throws(Refusal) -> DirectoryDescriptor {
        let folder: DirectoryDescriptor
        let status: FileStatus
        do throws(Errno) {
            folder = try openDeviceFolder(in: root, creating: creating)
            do throws(Errno) {
                status = try folder.status()
            } catch {
                folder.close()
                throw error
            }
        } catch {
            throw Refusal(description: "cannot open the device folder \(path)/\(deviceID): \(error)", errno: error)
        }
        if let problem = trust.problem(with: status, path: "\(path)/\(deviceID)") {
            folder.close()
            throw Refusal(description: "refusing the history's device folder: \(problem)")
        }
        return folder
    }

    private func openDeviceFolder(in root: DirectoryDescriptor, creating: Bool) throws(Errno) -> DirectoryDescriptor {
        let existed = try root.status(of: deviceID) != nil
        let folder = try root.openDirectory(deviceID, creatingWith: creating ? 0o700 : nil)
        guard !existed else { return folder }
        // A new entry: durable before anything is written in it.
        do throws(Errno) {
            try root.sync()
        } catch {
            folder.close()
            throw error
        }
        return folder
    }

    /// `device.json`, `{"id":…,"name":…,"host":…}`: written when missing, or when the name
    /// changed (`--device-name`); the host is the one of its first making.
    private func writeDeviceFile(in device: DirectoryDescriptor) throws(Errno) {
        var host = hostName
        if let file = try? device.openFile(Self.deviceFileName, [.readOnly, .noFollow, .nonBlocking]) {
            defer { file.close() }
            if let bytes = try? file.readAll(limit: 64 * 1024), let json = try? JSONParser.parse(bytes), case .object(let object) = json {
                if case .string(let name)? = object["name"], case .string(let id)? = object["id"], name == deviceName, id == deviceID {
                    return
                }
                if case .string(let first)? = object["host"] { host = first }
            }
        }
        let object: JSONObject = ["id": .string(deviceID), "name": .string(deviceName), "host": .string(host)]
        var bytes: [UInt8] = []
        JSONValue.object(object).write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        try replace(Self.deviceFileName, in: device, with: bytes)
    }

    /// Moves the months of format 1 at the top of the folder into the device's folder.
    /// `.complete` once none is left there. A month whose name the device's folder already holds
    /// is never replaced: the same bytes (a copy a sync tool made) and the top one is
    /// removed; other bytes and both are left as they are, logged, and the folder stays
    /// unmarked (`.monthsLeft`), so that the next start looks again; the device's own is the one read.
    private func migrate(from root: DirectoryDescriptor, to device: DirectoryDescriptor, path: String) throws(Errno) -> Migration {
        let months = try root.entries().compactMap(HistoryMonth.init(fileName:)).sorted()
        var moved: [String] = []
        var left: [String] = []
        for month in months {
            let name = month.fileName
            // Moved whatever it is (a link, a FIFO): the reader skips what is not a regular
            // file, and the move neither opens nor follows it.
            do throws(Errno) {
                try root.move(name, to: device, as: name)
                moved.append(name)
            } catch where [EPERM, EXDEV, EOPNOTSUPP].contains(error.code) {
                // What was moved stays moved (durable below); the rest is the user's to move.
                if !moved.isEmpty {
                    try device.sync()
                    try root.sync()
                }
                return .cannotMove(name, error)
            } catch where error == .exists {
                if let status = try root.status(of: name), status.kind != .regular {
                    // A link or other thing with a month's name: nothing to compare (ELOOP).
                    logger.error("\(path)/\(name) is not a regular file (\(status.kind)) and \(path)/\(deviceID)/\(name) exists: neither is changed; the device folder's is read. Remove the first, then restart")
                    left.append(name)
                } else if try sameContent(name, root, device) {
                    try root.remove(name)
                    logger.notice("\(path)/\(name) was already in the device folder \(deviceID)/ with the same content: the copy at the top removed")
                } else {
                    logger.error("\(path)/\(name) and \(path)/\(deviceID)/\(name) both exist and differ: neither is changed; the device folder's is read. Append the lines of the first that the second lacks to it in place (an editor that saves a new file makes the next start refuse the folder as another writer's), remove the first, then restart")
                    left.append(name)
                }
            }
        }
        if !moved.isEmpty {
            try device.sync()
            try root.sync()
            logger.notice("moved the history's \(moved.joined(separator: ", ")) into its device folder \(path)/\(deviceID)/ (history format 2); nothing in them changed")
        }
        return left.isEmpty ? .complete : .monthsLeft
    }

    /// What `migrate` left.
    private enum Migration {
        /// No month at the top.
        case complete
        /// Months left at the top, differing from the device folder's (logged).
        case monthsLeft
        /// A month the file system would not move (`DirectoryDescriptor.move`'s error).
        case cannotMove(String, Errno)
    }

    /// Months at the top of a folder already in format 2 (written there by a release before,
    /// run again): never read; said at start, with what to do.
    private func warnOfMonthsLeft(in root: DirectoryDescriptor, path: String) {
        guard let months = try? root.entries().compactMap(HistoryMonth.init(fileName:)).sorted(), !months.isEmpty else { return }
        let names = months.map(\.fileName).joined(separator: ", ")
        logger.warning("\(path) holds \(names) at its top, which format 2 does not read (an older stopwatchd wrote them): stop stopwatchd, append their lines to the same files in \(path)/\(deviceID)/, remove them, and start it again")
    }

    private func sameContent(_ name: String, _ a: DirectoryDescriptor, _ b: DirectoryDescriptor) throws(Errno) -> Bool {
        let first = try a.openFile(name, [.readOnly, .noFollow, .nonBlocking])
        defer { first.close() }
        let second = try b.openFile(name, [.readOnly, .noFollow, .nonBlocking])
        defer { second.close() }
        let (one, other) = (try first.status(), try second.status())
        guard one.size == other.size else { return false }
        var offset: Int64 = 0
        while offset < one.size {
            let x = try first.read(upTo: 65_536, at: offset)
            let y = try second.read(upTo: 65_536, at: offset)
            guard x == y, !x.isEmpty else { return x == y && offset == one.size }
            offset += Int64(x.count)
        }
        return true
    }

    /// Replaces `name` in `directory` with `bytes`, atomically: a temporary file made
    /// exclusively without following links, written and flushed, renamed over, the
    /// directory flushed.
    private func replace(_ name: String, in directory: DirectoryDescriptor, with bytes: [UInt8]) throws(Errno) {
        let temporary = ".\(name).tmp"
        directory.remove(orIgnore: temporary)
        let file = try directory.openFile(temporary, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
        do throws(Errno) {
            try file.writeAll(bytes)
            try file.sync()
            file.close()
            try directory.rename(temporary, to: name)
            try directory.sync()
        } catch {
            file.close()
            try? directory.remove(temporary)
            throw error
        }
    }
}

extension DirectoryDescriptor {
    /// Removes `name` if it is there, ignoring failure (a leftover temporary file).
    fileprivate func remove(orIgnore name: String) {
        try? remove(name)
    }
}

/// This device's id and name (SPEC §4): given, or derived from the machine.
///
/// Package-visible: swbench writes a history into this device's folder.
package enum DeviceIdentity {
    /// The fixed 16 bytes that make the device id this application's (as systemd's
    /// `sd_id128_get_machine_app_specific()` takes an app id): docs/HISTORY.md gives them.
    static let applicationID: [UInt8] = [
        0x7f, 0x3c, 0x1a, 0x9e, 0x5b, 0x2d, 0x4e, 0x8f, 0x9a, 0x6c, 0x0d, 0x3b, 0x1e, 0x5f, 0x7a, 0x29,
    ]

    /// 32 hex digits from `/etc/machine-id`'s (its 16 bytes as the key of HMAC-SHA256 over
    /// `applicationID`, the first 16 bytes of the result with the bits of a v4 UUID set), so
    /// the machine id itself is not revealed; nil when it cannot be read.
    static func derived(machineID text: String) -> String? {
        let hex = Array(text.utf8.prefix { $0 != UInt8(ascii: "\n") })
        guard hex.count == 32, let key = bytes(ofHex: hex) else { return nil }
        var digest = hmacSHA256(key: key, message: applicationID).prefix(16).map { $0 }
        digest[6] = digest[6] & 0x0F | 0x40
        digest[8] = digest[8] & 0x3F | 0x80
        return digest.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
        }.joined()
    }

    package static func machineDerived() -> String? {
        guard let bytes = try? FileSystem.contents(of: "/etc/machine-id", limit: 4096) else { return nil }
        return derived(machineID: String(decoding: bytes, as: UTF8.self))
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// Whether `text` may be a device id: 32 lowercase hex digits.
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32 && bytes(ofHex: Array(text.utf8)) != nil
    }

    private static func bytes(ofHex hex: [UInt8]) -> [UInt8]? {
        func value(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        guard hex.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let high = value(hex[index]), let low = value(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.digest(of: key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.digest(of: block.map { $0 ^ 0x36 } + message)
        return SHA256.digest(of: block.map { $0 ^ 0x5c } + inner)
    }
}
