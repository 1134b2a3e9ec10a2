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

    /// Replaces several files as `replaceAtomically` replaces one, with the flushes shared:
    /// every temporary file is written, the writeback of all is started, each is flushed
    /// (its data must be on disk before its rename), then all are renamed and the directory
    /// is flushed once. A crash at any moment leaves each file old or new, whole. At the
    /// first failure the temporary files not yet renamed are removed and it throws: those
    /// already renamed are in place, the others unchanged, and the caller writes them again.
    package func replaceAtomically(_ files: [(name: String, bytes: [UInt8], temporaryName: String)]) throws(Errno) {
        var written: [(file: FileDescriptor, name: String, temporaryName: String)] = []
        func removeTemporaryFiles(from index: Int) {
            for entry in written[index...] {
                entry.file.close()
                try? remove(entry.temporaryName)
            }
        }
        let flags: OpenFlags = [.writeOnly, .create, .exclusive, .noFollow]
        do throws(Errno) {
            for file in files {
                let opened: FileDescriptor
                do {
                    opened = try openFile(file.temporaryName, flags, mode: 0o600)
                } catch where error == .exists {
                    try remove(file.temporaryName)
                    opened = try openFile(file.temporaryName, flags, mode: 0o600)
                }
                written.append((opened, file.name, file.temporaryName))
                try opened.writeAll(file.bytes)
            }
            // A hint: a failure here costs only the sharing.
            for entry in written { try? entry.file.startWriteback() }
            for entry in written { try entry.file.dataSync() }
        } catch {
            removeTemporaryFiles(from: 0)
            throw error
        }
        for (index, entry) in written.enumerated() {
            entry.file.close()
            do throws(Errno) {
                try rename(entry.temporaryName, to: entry.name)
            } catch {
                try? remove(entry.temporaryName)
                removeTemporaryFiles(from: index + 1)
                throw error
            }
        }
        try sync()
    }
}
