import LinuxSystem

/// The hook directory: opened once it exists (`O_DIRECTORY|O_NOFOLLOW`) and kept, checked
/// against `DirectoryTrust` at every event, and listed anew at every event, so that a hook
/// added (or the directory made) while the daemon runs is run at the next event. Each hook
/// is reached through the directory's descriptor, never by path, and checked by
/// `HookFileTrust`.
///
/// What is wrong (an untrusted directory, a file skipped) is logged once per episode: again
/// only after it was right in between, or wrong in another way.
///
/// Not thread-safe: it belongs to the `HookRunner`'s queue.
final class HookDirectory {
    let path: String
    private let trust: DirectoryTrust
    private let files: HookFileTrust
    private let logger: Logger
    private var descriptor: DirectoryDescriptor?
    /// The directory's problem last logged, if it still has it.
    private var reportedProblem: String?
    /// The files skipped at the last listing, and why (logged when they first were).
    private var reportedSkips: [String: HookFileTrust.Skip] = [:]

    init(path: String, trust: DirectoryTrust, logger: Logger) {
        self.path = path
        self.trust = trust
        self.files = HookFileTrust(userID: trust.userID)
        self.logger = logger
    }

    deinit {
        descriptor?.close()
    }

    /// At the daemon's start: opens the directory if it is there. One there that is not to be
    /// trusted stops the start, with a message saying how to fix it; a missing one is fine
    /// (hooks run once it exists).
    func openAtStart() throws(DaemonStartError) {
        switch open() {
        case .opened, .missing:
            return
        case .problem(let problem):
            throw DaemonStartError("refusing the hook directory: \(problem)")
        }
    }

    private enum Opening {
        case opened(DirectoryDescriptor)
        case missing
        case problem(String)
    }

    /// The directory, open and trusted, or why not.
    private func open() -> Opening {
        if let descriptor {
            // A directory removed since is still open, and empty for good: open it anew.
            if let status = try? descriptor.status(), status.linkCount > 0 {
                if let problem = trust.problem(with: status, path: path) { return .problem(problem) }
                return .opened(descriptor)
            }
            descriptor.close()
            self.descriptor = nil
        }
        let opened: DirectoryDescriptor
        do {
            opened = try openFollowingOwnLink()
        } catch where error == .noEntry {
            return .missing
        } catch where error == .tooManyLinks {
            return .problem("\(path) is a symbolic link owned by another user than this one or root; give the directory it points to")
        } catch where error == .notDirectory {
            return .problem("\(path) is not a directory")
        } catch {
            return .problem("cannot open \(path): \(error)")
        }
        let status: FileStatus
        do {
            status = try opened.status()
        } catch {
            opened.close()
            return .problem("cannot inspect \(path): \(error)")
        }
        if let problem = trust.problem(with: status, path: path) {
            opened.close()
            return .problem(problem)
        }
        descriptor = opened
        return .opened(opened)
    }

    /// As `StateDirectory` does: a symbolic link in the directory's place that this user or
    /// root made (a dotfiles manager's) is followed once; what it leads to is opened without
    /// following anything further, and checked like the directory itself.
    private func openFollowingOwnLink() throws(Errno) -> DirectoryDescriptor {
        do {
            return try DirectoryDescriptor.open(path)
        } catch where error == .tooManyLinks {
            let link = try FileSystem.ownerAndMode(at: path)
            guard link.uid == trust.userID || link.uid == 0 else { throw error }
            return try DirectoryDescriptor.open(try FileSystem.resolvedPath(path))
        }
    }

    /// The hooks to run for an event, in name order. Skipped files are logged once per
    /// episode; a directory that is missing runs none, one not to be trusted runs none and
    /// is logged.
    func hooks() -> [String] {
        let directory: DirectoryDescriptor
        switch open() {
        case .missing:
            reportedProblem = nil
            return []
        case .problem(let problem):
            if problem != reportedProblem {
                logger.warning("running no hooks: \(problem)")
                reportedProblem = problem
            }
            return []
        case .opened(let opened):
            directory = opened
        }
        if reportedProblem != nil {
            logger.notice("the hook directory \(path) is usable again")
            reportedProblem = nil
        }
        let names: [String]
        do {
            names = try directory.entries()
        } catch {
            logger.warning("cannot list the hook directory \(path): \(error)")
            return []
        }
        var listing: [HookFileTrust.Entry] = []
        for name in names where !name.hasPrefix(".") {
            // Gone since the listing, or unreadable: not a hook now.
            guard let entry = try? directory.status(of: name) else { continue }
            let target = entry.kind == .symbolicLink ? (try? directory.statusFollowingLinks(of: name)) ?? nil : entry
            listing.append(HookFileTrust.Entry(name: name, entry: entry, target: target))
        }
        let plan = files.plan(listing)
        var skips: [String: HookFileTrust.Skip] = [:]
        for (name, skip) in plan.skipped {
            skips[name] = skip
            if reportedSkips[name] != skip { report(skip, name) }
        }
        reportedSkips = skips
        return plan.run
    }

    /// Opens hook `name` to run it: only as a path (`O_PATH`), following a symbolic link
    /// there, and checked again on that descriptor, which is what runs. Nil (logged) when it
    /// is no longer to be run.
    func open(_ name: String) -> FileDescriptor? {
        guard let directory = descriptor else { return nil }
        let file: FileDescriptor
        let entry: FileStatus
        do {
            guard let status = try directory.status(of: name) else { return nil }
            entry = status
            file = try directory.openPath(name, followingLinks: entry.kind == .symbolicLink)
        } catch {
            logger.warning("cannot open hook \(path)/\(name): \(error)")
            return nil
        }
        let target = try? file.status()
        guard let target, case .run = files.decide(entry: entry, target: target) else {
            if let target, case .skip(let skip) = files.decide(entry: entry, target: target) {
                report(skip, name)
                reportedSkips[name] = skip
            }
            file.close()
            return nil
        }
        return file
    }

    private func report(_ skip: HookFileTrust.Skip, _ name: String) {
        let message = skip.message("\(path)/\(name)", userID: files.userID)
        if skip.isWarning { logger.warning(message) } else { logger.notice(message) }
    }
}
