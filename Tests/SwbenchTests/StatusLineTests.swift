import Testing

@testable import swbench

/// The check that the C client and swctl print the same status line, and where swbench
/// looks for the C client and its compiler.
struct StatusLineTests {
    private func isCounting(_ text: String) -> Bool {
        StatusLine.isCounting(Array(text.utf8), name: "bench")
    }

    @Test func acceptsTheLineSwctlPrints() {
        #expect(isCounting("bench counting 0:00:01\n"))
        #expect(isCounting("bench counting 123:59:59\n"))
    }

    @Test func refusesWhatAFailingClientPrints() {
        #expect(!isCounting(""))
        #expect(!isCounting("bench counting 0:00:01"), "no newline")
        #expect(!isCounting("bench stopped 0:00:00\n"))
        #expect(!isCounting("other counting 0:00:01\n"))
        #expect(!isCounting("bench counting 0:60:00\n"))
        #expect(!isCounting("bench counting 0:0:01\n"))
        #expect(!isCounting("bench counting :00:01\n"))
        #expect(!isCounting("bench counting 0:00:01.5\n"))
        #expect(!isCounting("bench counting 0:00:01\nbench counting 0:00:01\n"))
        #expect(!isCounting("bench counting ٠:00:01\n"), "digits outside ASCII")
    }

    @Test func theSourceOptionWins() {
        #expect(
            CClient.sourceCandidates(option: "/x/s.c", currentDirectory: "/here", invokedPath: "swbench", executablePath: "/r/.build/release/swbench")
                == ["/x/s.c"]
        )
    }

    @Test func theSourceIsLookedForHereThenInTheRepositoryAboveTheBuild() {
        #expect(
            CClient.sourceCandidates(
                option: nil, currentDirectory: "/here", invokedPath: "/elsewhere/.build-release/release/swbench",
                executablePath: "/repo/.build-release/x86_64-unknown-linux-gnu/release/swbench"
            ) == [
                "/here/Benchmarks/c-client/status.c", "/elsewhere/Benchmarks/c-client/status.c",
                "/repo/.build-release/Benchmarks/c-client/status.c", "/repo/Benchmarks/c-client/status.c",
            ]
        )
        // Invoked relative to the current directory: the same folder, looked in once.
        #expect(
            CClient.sourceCandidates(
                option: nil, currentDirectory: "/repo", invokedPath: ".build-release/release/swbench",
                executablePath: "/repo/.build-release/x86_64-unknown-linux-gnu/release/swbench"
            ) == ["/repo/Benchmarks/c-client/status.c", "/repo/.build-release/Benchmarks/c-client/status.c"]
        )
        // Found on PATH: only the real path tells where the repository is.
        #expect(
            CClient.sourceCandidates(option: nil, currentDirectory: "/", invokedPath: "swbench", executablePath: "/repo/.build/release/swbench")
                == ["/Benchmarks/c-client/status.c", "/repo/Benchmarks/c-client/status.c"]
        )
    }

    @Test func theCompilerIsCCOrCCFromThePath() {
        let present: Set<String> = ["/usr/bin/cc", "/opt/bin/clang"]
        let isExecutable = { (path: String) in present.contains(path) }
        #expect(CClient.compilerCommand(cc: nil, searchPath: "/bin:/usr/bin", isExecutable: isExecutable) == ["/usr/bin/cc"])
        #expect(CClient.compilerCommand(cc: "clang -m64", searchPath: "/opt/bin", isExecutable: isExecutable) == ["/opt/bin/clang", "-m64"])
        #expect(CClient.compilerCommand(cc: "/opt/bin/clang", searchPath: "", isExecutable: isExecutable) == ["/opt/bin/clang"])
        #expect(CClient.compilerCommand(cc: "gcc", searchPath: "/bin:/usr/bin", isExecutable: isExecutable) == nil)
    }
}
