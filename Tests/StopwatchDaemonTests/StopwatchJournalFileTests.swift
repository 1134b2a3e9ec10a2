import Glibc
import LinuxSystem
import Testing
import TestSupport

@testable import StopwatchDaemon

/// WORK IN PROGRESS (issue 30): the journal file's appends, emptying, reading and cutting, and
/// what it refuses in its place.
@Suite("stopwatch journal file")
struct StopwatchJournalFileTests {
    let folder: TemporaryFolder
    let directory: DirectoryDescriptor

    init() throws {
        folder = try TemporaryFolder(prefix: "journal")
        directory = try DirectoryDescriptor.open(folder.path)
    }

    @Test func appendedLinesAreReadBackThenEmptiedThenAppendedAgain() throws {
        defer { directory.close() }
        let file = StopwatchFileName.journal(of: "work")
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == nil)
        #expect(try StopwatchJournalFile.append(Array("a\n".utf8), to: file, in: directory) == 2)
        #expect(try StopwatchJournalFile.append(Array("bc\n".utf8), to: file, in: directory) == 5)
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == Array("a\nbc\n".utf8))
        try StopwatchJournalFile.cut(file, to: 2, in: directory)
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == Array("a\n".utf8))
        try StopwatchJournalFile.empty(file, in: directory)
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == [])
        #expect(try StopwatchJournalFile.append(Array("d\n".utf8), to: file, in: directory) == 2)
        #expect(throws: Errno(EFBIG)) { try StopwatchJournalFile.contents(of: file, in: directory, limit: 1) }
        try StopwatchJournalFile.empty("absent", in: directory)
    }

    @Test(arguments: ["link", "fifo", "directory"])
    func onlyARegularFileIsAJournal(_ kind: String) throws {
        defer { directory.close() }
        let file = StopwatchFileName.journal(of: "work")
        let path = folder.path + "/" + file
        switch kind {
        case "link": #expect(symlink(folder.path + "/elsewhere", path) == 0)
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        default: #expect(mkdir(path, 0o700) == 0)
        }
        #expect(throws: Errno.self) { try StopwatchJournalFile.append(Array("a\n".utf8), to: file, in: directory) }
        #expect(throws: Errno.self) { try StopwatchJournalFile.contents(of: file, in: directory, limit: 100) }
        #expect(throws: Errno.self) { try StopwatchJournalFile.empty(file, in: directory) }
        #expect(access(folder.path + "/elsewhere", F_OK) != 0, "nothing made through the link")
    }
}
