/// glibc's `malloc_trim`, which Glibc's module does not export (malloc.h is not in it).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> CInt

public enum Memory {
    /// Returns the allocator's free memory to the system: after a burst of clients, a
    /// long-running daemon should not keep its peak for ever.
    public static func releaseFree() {
        _ = mallocTrim(0)
    }
}
