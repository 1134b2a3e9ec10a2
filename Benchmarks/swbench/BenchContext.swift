import LinuxSystem

/// What every measurement needs: the options, the plan, and a place for its daemons.
struct BenchContext {
    let options: BenchOptions
    let plan: BenchPlan
    let directory: TemporaryDirectory

    /// Starts a daemon in a new subdirectory `name` (which may be prepared beforehand).
    func startDaemon(_ name: String, arguments: [String] = []) throws(BenchError) -> DaemonUnderTest {
        try DaemonUnderTest(binary: options.daemonPath, directory: subdirectory(name), arguments: arguments)
    }

    func subdirectory(_ name: String) throws(BenchError) -> String {
        do {
            return try directory.subdirectory(name)
        } catch {
            throw BenchError("cannot create \(directory.path)/\(name): \(error)")
        }
    }

    /// Tells what is being measured, on standard error.
    func progress(_ message: String) {
        Diagnostics.warn("swbench: \(message)")
    }
}
