import Glibc
import LinuxSystem

/// A C baseline, built by swbench in its own run so that it is measured as this machine's
/// compiler and libc make it: `swctl status`'s (`Benchmarks/c-client/status.c`, the same Get
/// and the same line with libc alone), the raw fan-out's in a process of its own
/// (`raw-fanout.c`, `RawExpiries`), and the echo server of calls (`echo.c`, `EchoProcess`).
struct CClient {
    /// The C baselines' sources, in `Benchmarks/c-client/`.
    enum Program: String {
        case status = "status"
        case rawFanOut = "raw-fanout"
        case echo = "echo"

        var fileName: String { rawValue + ".c" }
    }

    /// The executable built.
    let path: String
    /// Whether `-static` linked; if not, it was linked dynamically (and pays the loader).
    let isStatic: Bool
    let source: String
    let compiler: [String]

    /// Where `program`'s source is: `option` when given; else `Benchmarks/c-client/<file>` under
    /// the current directory if it is there, else under the repository two levels above
    /// swbench's folder (`.build-release/release/swbench` → the repository). That folder is
    /// taken as swbench was invoked (`invokedPath`, made absolute) and as it really is
    /// (`executablePath`, where `release` is a link to `<triple>/release`: three levels
    /// down). The candidates in order, each once.
    static func sourceCandidates(
        _ program: Program = .status, option: String?, currentDirectory: String, invokedPath: String, executablePath: String
    ) -> [String] {
        if let option { return [option] }
        let relative = "Benchmarks/c-client/" + program.fileName
        func up(_ path: String, _ levels: Int) -> String {
            (0..<levels).reduce(path) { folder, _ in FileSystem.directoryName(of: folder) }
        }
        var folders = [currentDirectory]
        if invokedPath.contains("/") {
            let absolute = invokedPath.hasPrefix("/") ? invokedPath : "\(currentDirectory)/\(invokedPath)"
            folders.append(up(absolute, 3))
        }
        folders += [up(executablePath, 3), up(executablePath, 4)]
        var candidates: [String] = []
        for folder in folders {
            let candidate = (folder.hasSuffix("/") ? folder : folder + "/") + relative
            if !candidates.contains(candidate) { candidates.append(candidate) }
        }
        return candidates
    }

    /// The compiler's command: `$CC` (split at spaces, as make does) or `cc`, its first word
    /// looked up in `searchPath` unless it holds a slash. Nil when it is not found.
    static func compilerCommand(cc: String?, searchPath: String, isExecutable: (String) -> Bool) -> [String]? {
        let words = (cc ?? "cc").split(separator: " ").map(String.init)
        guard let program = words.first else { return nil }
        if program.contains("/") { return isExecutable(program) ? words : nil }
        for folder in searchPath.split(separator: ":") where isExecutable("\(folder)/\(program)") {
            return ["\(folder)/\(program)"] + words.dropFirst()
        }
        return nil
    }

    /// Compiles `program` into `directory` with `cc -O2 -static`, or without `-static` if
    /// static linking fails. `sourceOption` is `--c-client-source`, status.c's path: the other
    /// programs are looked for beside it first, then where they are without it. Throws, with
    /// the reason, when there is no source or compiler or neither build works.
    static func build(_ program: Program = .status, sourceOption: String?, into directory: String) throws(BenchError) -> CClient {
        var candidates = sourceCandidates(
            program, option: program == .status ? sourceOption : nil, currentDirectory: currentDirectory(),
            invokedPath: CommandLine.arguments[0], executablePath: BenchOptions.executablePath()
        )
        if program != .status, let sourceOption {
            candidates.insert(FileSystem.directoryName(of: sourceOption) + "/" + program.fileName, at: 0)
        }
        guard let source = candidates.first(where: { (try? FileSystem.kind(at: $0)) == .regular }) else {
            throw BenchError("no source of \(program.fileName) (looked for \(candidates.joined(separator: ", ")); pass --c-client-source, the path of status.c beside it)")
        }
        let environment = ProcessEnvironment.current
        let searchPath = environment["PATH"] ?? "/usr/bin:/bin"
        guard let compiler = compilerCommand(cc: environment["CC"], searchPath: searchPath, isExecutable: { access($0, X_OK) == 0 })
        else {
            throw BenchError("no C compiler: '\(environment["CC"] ?? "cc")' is not in PATH (\(searchPath)); set CC")
        }
        let output = directory + "/\(program.rawValue)-c"
        let log = directory + "/\(program.rawValue)-cc.log"
        for isStatic in [true, false] {
            let arguments = Array(compiler.dropFirst()) + ["-O2"] + (isStatic ? ["-static"] : []) + ["-o", output, source]
            let status: CInt
            do {
                let child = try ChildProcess(compiler[0], arguments, environment: ["PATH": searchPath], outputPath: log, errorPath: log)
                status = child.waitForExit()
            } catch {
                throw BenchError("cannot start \(compiler[0]): \(error)")
            }
            if status == 0 { return CClient(path: output, isStatic: isStatic, source: source, compiler: compiler) }
        }
        let message = ChildProcess.logText(at: log)
        throw BenchError("\(compiler.joined(separator: " ")) could not build \(source), static or not: \(message)")
    }

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil, let end = buffer.firstIndex(of: 0) else { return "." }
        return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
