import Glibc
import LinuxSystem
import StopwatchProtocol
import StopwatchdClient

// Parse, wire, run. Exit statuses are SPEC §5's: 0, 1 refused, 2 usage, 69, 70, 77.
// Started with a standard descriptor closed, the socket would take its number and receive
// the output; a reader that goes away is an EPIPE for `Output`, not a death by signal.
CurrentProcess.openStandardDescriptorsOnDevNull()
// `swctl status` of a plain stopwatch, as a status bar runs it each second: answered here,
// before the arguments become strings, or not at all (then by everything below). It starts
// no child, so the signals below are not its concern (it ignores SIGPIPE itself before it
// writes): looking at each of them was half of its system calls.
QuickStatus.answerIfPlain(argc: CommandLine.argc, argv: CommandLine.unsafeArgv)
// An ignored SIGCHLD inherited from the parent would make the kernel reap `--host`'s ssh
// itself: its exit status lost, and its pid signalled after it may be another's.
Signals.resetInherited()
Signals.ignoreBrokenPipes()
let environment = ProcessEnvironment.current
let rawArguments = (1..<Int(CommandLine.argc)).map { index in
    CommandLine.unsafeArgv[index].map { UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0)) }
        ?? UnsafeBufferPointer(start: nil, count: 0)
}
if let error = SwctlInvocation.checkEncoding(rawArguments) {
    Diagnostics.fail("swctl: \(error.message) (see swctl --help)", status: 2)
}
let action: SwctlInvocation.Action
do {
    action = try SwctlInvocation.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    Diagnostics.fail("swctl: \(error.message) (see swctl --help)", status: 2)
}
switch action {
case .help:
    Output.line(SwctlInvocation.usage)
case .version:
    Output.line("swctl \(Version.number)")
case .run(let invocation):
    let host: String?
    do {
        host = try invocation.remoteHost(environment: environment)
    } catch {
        Diagnostics.fail("swctl: \(error.message) (see swctl --help)", status: 2)
    }
    let tenths = environment["STOPWATCHD_TICK"].flatMap(DurationText.parse).map { $0 < .seconds(1) } ?? false
    if let host {
        // Every call through `ssh HOST swctl bridge`; `watch` starts a new ssh to reconnect.
        let endpoint = StopwatchClient.sshBridge(host: host, ssh: SwctlInvocation.sshCommand(environment: environment))
        CommandRunner(invocation: invocation, client: StopwatchClient(endpoint: endpoint), locateSocket: { nil }, tenths: tenths).run()
    }
    let locateSocket = { SocketLocation.clientPath(invocation.socket, environment: environment) }
    guard let path = locateSocket() else {
        Diagnostics.fail("swctl: --user needs XDG_RUNTIME_DIR to be set; use --socket PATH instead", status: 2)
    }
    let runner = CommandRunner(
        invocation: invocation, client: StopwatchClient(socketPath: path), locateSocket: locateSocket, tenths: tenths
    )
    runner.run()
}
