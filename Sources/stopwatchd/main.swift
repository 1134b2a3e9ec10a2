// The daemon comes with the varlink server (issue 3); for now it only knows who it is.
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--version") {
    print("stopwatchd 0.1.0")
} else {
    print("stopwatchd: the daemon is not built yet; StopWatchCore is.")
    print("usage: stopwatchd --version")
}
