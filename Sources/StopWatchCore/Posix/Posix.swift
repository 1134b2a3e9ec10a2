import Glibc

/// The one place where this package calls libc. Everything above it sees Swift types and
/// thrown `Errno`s, never `-1` and a global `errno`.
enum Posix {}
