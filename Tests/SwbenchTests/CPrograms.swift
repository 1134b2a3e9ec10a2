import Glibc
import LinuxSystem

@testable import swbench

/// The C baselines (`Benchmarks/c-client/`) built as swbench builds them, for the tests that
/// run them; those tests are skipped where no C compiler is found.
enum CPrograms {
    static let repository = FileSystem.directoryName(of: FileSystem.directoryName(of: FileSystem.directoryName(of: #filePath)))
    static let compiler = CClient.compilerCommand(
        cc: ProcessEnvironment.current["CC"], searchPath: ProcessEnvironment.current["PATH"] ?? "/usr/bin:/bin",
        isExecutable: { access($0, X_OK) == 0 }
    )

    /// `program` built into `directory`, found beside status.c given as `--c-client-source`.
    static func build(_ program: CClient.Program, into directory: TemporaryDirectory) throws -> CClient {
        try CClient.build(program, sourceOption: repository + "/Benchmarks/c-client/status.c", into: directory.path)
    }
}
