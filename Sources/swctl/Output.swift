import LinuxSystem

/// Standard output, unbuffered: each line goes out whole and at once, which is what a
/// status bar reading a pipe needs.
enum Output {
    static func line(_ text: String) {
        write(text + "\n")
    }

    static func write(_ text: String) {
        do {
            try FileDescriptor.standardOutput.writeAll(Array(text.utf8))
        } catch where error == .brokenPipe {
            // The reader went away (a bar restarted, `| head` had enough): nothing is wrong,
            // and nobody is left to tell. The same exit as the watch on standard output.
            CurrentProcess.exitAtOnce(0)
        } catch {
            Diagnostics.fail("swctl: cannot write output: \(error)", status: 1)
        }
    }
}
