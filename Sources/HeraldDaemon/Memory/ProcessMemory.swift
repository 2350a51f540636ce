import CHeraldSystem

/// The daemon's own memory figures, for `herald status`, and the giving back of file pages (`IdlePages`,
/// `StartupPages`).
enum ProcessMemory {
    /// The resident set (file pages included), in KiB; 0 when it cannot be read.
    static func residentKiB() -> Int { max(0, herald_resident_kib()) }

    /// What the allocator has handed out and not had back, in KiB.
    static func heapInUseKiB() -> Int { herald_heap_in_use_bytes() / 1024 }

    /// Unmaps the clean pages of private read-only file mappings (the pages stay in the page cache and map back on
    /// first use); the KiB those mappings span, or nil when `/proc/self/smaps` is unreadable.
    static func releaseFilePages() -> Int? {
        let released = herald_release_file_pages()
        return released < 0 ? nil : released / 1024
    }
}
