// `Stopwatch`, the type every call returns, lives in StopwatchProtocol, which the daemon
// shares. Re-exported so that a program using the client imports StopwatchdClient alone:
// StopwatchProtocol's only public type is `Stopwatch` (docs/API.md).
@_exported import StopwatchProtocol
