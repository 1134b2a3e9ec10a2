import Glibc
import LinuxSystem

/// The C baseline of `swctl status` (`Benchmarks/c-client/status.c`): the same Get and the
/// same line with libc alone, built by swbench in its own run so that it is measured as
/// this machine's compiler and libc make it.
struct CClient {
    /// The executable built.
    let path: String
    /// Whether `-static` linked; if not, it was linked dynamically (and pays the loader).
    let isStatic: Bool
    let source: String
    let compiler: [String]

    /// Where the source is: `option` when given; else `Benchmarks/c-client/status.c` under
    /// the current directory if it is there, else under the repository two levels above
    /// swbench's folder (`.build-release/release/swbench` → the repository). That folder is
    /// taken as swbench was invoked (`invokedPath`, made absolute) and as it really is
    /// (`executablePath`, where `release` is a link to `<triple>/release`: three levels
    /// down). The candidates in order, each once.
    static func sourceCandidates(option: String?, currentDirectory: String, invokedPath: String, executablePath: String) -> [String] {
        if let option { return [option] }
        let relative = "Benchmarks/c-client/status.c"
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

    /// Compiles the client into `directory` with `cc -O2 -static`, or without `-static` if
    /// static linking fails. Throws, with the reason, when there is no source or compiler or
    /// neither build works.
    static func build(sourceOption: String?, into directory: String) throws(BenchError) -> CClient {
        let candidates = sourceCandidates(
            option: sourceOption, currentDirectory: currentDirectory(), invokedPath: CommandLine.arguments[0],
            executablePath: BenchOptions.executablePath()
        )
        guard let source = candidates.first(where: { (try? FileSystem.kind(at: $0)) == .regular }) else {
            throw BenchError("no C client source (looked for \(candidates.joined(separator: ", ")); pass --c-client-source)")
        }
        let environment = ProcessEnvironment.current
        let searchPath = environment["PATH"] ?? "/usr/bin:/bin"
        guard let compiler = compilerCommand(cc: environment["CC"], searchPath: searchPath, isExecutable: { access($0, X_OK) == 0 })
        else {
            throw BenchError("no C compiler: '\(environment["CC"] ?? "cc")' is not in PATH (\(searchPath)); set CC")
        }
        let output = directory + "/status-c"
        let log = directory + "/cc.log"
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
        let message = ((try? FileSystem.contents(of: log, limit: 2_000)) ?? []).withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
        throw BenchError("\(compiler.joined(separator: " ")) could not build \(source), static or not: \(message)")
    }

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil, let end = buffer.firstIndex(of: 0) else { return "." }
        return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
