/// glibc's `malloc_trim`, which Glibc's module does not export (malloc.h is not in it).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> CInt

/// glibc's `mallopt`, also from malloc.h.
@_silgen_name("mallopt")
private func mallocOption(_ option: CInt, _ value: CInt) -> CInt

package enum Memory {
    /// At most `count` malloc arenas. glibc makes one per thread that allocates, up to 8 per
    /// core, and each keeps the memory it once held: a daemon whose work moves between
    /// dispatch's worker threads crept up after each burst of clients, by several times what
    /// it grows with two arenas (docs/PERFORMANCE.md).
    /// `MALLOC_ARENA_MAX` in the environment, when set, wins.
    package static func limitArenas(to count: Int) {
        // M_ARENA_MAX, a C macro.
        let arenaMaximum: CInt = -8
        _ = mallocOption(arenaMaximum, CInt(count))
    }

    /// Blocks of `bytes` or more in mappings of their own, unmapped when freed, for good:
    /// glibc otherwise raises that threshold to the size of the first such block freed, and
    /// serves every later one from the heap, where it stays resident once freed.
    package static func mapBlocks(ofAtLeast bytes: Int) {
        // M_MMAP_THRESHOLD, a C macro.
        let mmapThreshold: CInt = -3
        _ = mallocOption(mmapThreshold, CInt(bytes))
    }

    /// Returns the allocator's free memory to the system: after a burst of clients, a
    /// long-running daemon should not keep its peak for ever.
    package static func releaseFree() {
        _ = mallocTrim(0)
    }
}
