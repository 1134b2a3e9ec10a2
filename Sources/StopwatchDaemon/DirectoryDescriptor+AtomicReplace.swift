import LinuxSystem

extension DirectoryDescriptor {
    /// Replaces file `name` with `bytes` so that a crash at any moment leaves either the old
    /// file or the new one, whole: writes `temporaryName` (created exclusively, never through
    /// a link), flushes it, renames it over `name`, and flushes the directory so the rename
    /// itself is durable.
    package func replaceAtomically(_ name: String, with bytes: [UInt8], through temporaryName: String) throws(Errno) {
        let flags: OpenFlags = [.writeOnly, .create, .exclusive, .noFollow]
        let file: FileDescriptor
        do {
            file = try openFile(temporaryName, flags, mode: 0o600)
        } catch where error == .exists {
            // A leftover, or something planted: removed (a link itself, not its target).
            try remove(temporaryName)
            file = try openFile(temporaryName, flags, mode: 0o600)
        }
        do throws(Errno) {
            try file.writeAll(bytes)
            try file.sync()
        } catch {
            file.close()
            try? remove(temporaryName)
            throw error
        }
        file.close()
        do throws(Errno) {
            try rename(temporaryName, to: name)
        } catch {
            try? remove(temporaryName)
            throw error
        }
        try sync()
    }
}
