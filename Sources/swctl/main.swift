// The client comes with the varlink protocol (issue 3); for now it only knows who it is.
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--version") {
    print("swctl 0.1.0")
} else {
    print("swctl: the client is not built yet; StopWatchCore is.")
    print("usage: swctl --version")
}
