import LinuxSystem

// Measures stopwatchd against baselines of its own: see docs/PERFORMANCE.md.
do {
    guard let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) else {
        print(BenchOptions.usage)
        CurrentProcess.exit(0)
    }
    CurrentProcess.exit(try Swbench.run(options))
} catch {
    Diagnostics.fail("swbench: \(error)", status: 2)
}
