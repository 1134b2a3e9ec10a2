import Glibc
import LinuxSystem

/// Which files in the hook directory are run (SPEC §4, "Events and hooks"). A hook runs
/// with the daemon's rights, so only a file that nobody but the daemon's user and root can
/// change is run: a regular file, owned by the daemon's user or root, writable by neither
/// its group nor others, with an execute bit.
///
/// A symbolic link is followed (`ln -s …/share/stopwatchd/hooks/notify` is how the shipped
/// hook is enabled), when the link itself is owned by the daemon's user or root; the rules
/// above then apply to what it leads to, checked on the very file that is run (opened with
/// `O_PATH` and run as `/proc/self/fd/3`, so a file swapped after the check is not run).
/// Names beginning with "." (editors' swap files) are ignored without a word.
struct HookFileTrust: Sendable {
    /// Why a file is not run.
    enum Skip: Equatable, Sendable {
        case notRegular(FileStatus.Kind)
        case linkToNothing
        case untrustedLink(owner: uid_t)
        case untrustedOwner(uid_t)
        case writableByOthers(mode_t)
        case notExecutable

        /// A danger rather than a slip: logged as a warning.
        var isWarning: Bool {
            switch self {
            case .untrustedLink, .untrustedOwner, .writableByOthers: true
            case .notRegular, .linkToNothing, .notExecutable: false
            }
        }

        /// What is wrong with `path`, and how to fix it.
        func message(_ path: String, userID: uid_t) -> String {
            switch self {
            case .notRegular(let kind):
                "skipping hook \(path): not a regular file (\(kind))"
            case .linkToNothing:
                "skipping hook \(path): a symbolic link to nothing"
            case .untrustedLink(let owner):
                "skipping hook \(path): a symbolic link owned by uid \(owner), not by this user (uid \(userID)) or root"
            case .untrustedOwner(let owner):
                "skipping hook \(path): owned by uid \(owner), not by this user (uid \(userID)) or root; chown \(userID) it if it is to run"
            case .writableByOthers(let mode):
                "skipping hook \(path): writable by its group or others (mode \(String(mode, radix: 8))); chmod go-w it if it is to run"
            case .notExecutable:
                "skipping hook \(path): not executable; chmod +x it if it is to run"
            }
        }
    }

    enum Decision: Equatable, Sendable {
        case run
        case skip(Skip)
    }

    /// One name in the directory, as listed: what is there (`lstat`), and what it leads to
    /// (`stat`: the same for anything but a symbolic link; nil for a link to nothing).
    struct Entry: Equatable, Sendable {
        var name: String
        var entry: FileStatus
        var target: FileStatus?
    }

    let userID: uid_t

    init(userID: uid_t) {
        self.userID = userID
    }

    private func isTrusted(owner: uid_t) -> Bool { owner == userID || owner == 0 }

    /// Whether a file is run: `entry` is what is in the directory, `target` what it leads to
    /// (for the file about to run: the status of its very descriptor, whatever the entry).
    func decide(entry: FileStatus, target: FileStatus?) -> Decision {
        let file: FileStatus
        if entry.kind == .symbolicLink {
            guard isTrusted(owner: entry.ownerID) else { return .skip(.untrustedLink(owner: entry.ownerID)) }
            guard let target else { return .skip(.linkToNothing) }
            file = target
        } else {
            file = target ?? entry
        }
        guard file.kind == .regular else { return .skip(.notRegular(file.kind)) }
        guard isTrusted(owner: file.ownerID) else { return .skip(.untrustedOwner(file.ownerID)) }
        guard file.mode & (S_IWGRP | S_IWOTH) == 0 else { return .skip(.writableByOthers(file.mode)) }
        guard file.mode & (S_IXUSR | S_IXGRP | S_IXOTH) != 0 else { return .skip(.notExecutable) }
        return .run
    }

    /// The hooks of a listing, in the order they run (the names' bytes, as `LC_ALL=C ls`),
    /// and those skipped, with why. Hidden names are neither.
    func plan(_ listing: [Entry]) -> (run: [String], skipped: [(name: String, skip: Skip)]) {
        var run: [String] = []
        var skipped: [(name: String, skip: Skip)] = []
        for item in listing.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) where !item.name.hasPrefix(".") {
            switch decide(entry: item.entry, target: item.target) {
            case .run: run.append(item.name)
            case .skip(let skip): skipped.append((item.name, skip))
            }
        }
        return (run, skipped)
    }
}
