/// The baseline for process starts: `/bin/true`, spawned and waited for.
enum BareStart {
    static func milliseconds() throws(BenchError) -> Double {
        do {
            return try ChildProcess.timedRun("/bin/true", []).time.inMilliseconds
        } catch {
            throw BenchError("cannot start /bin/true: \(error)")
        }
    }
}
