import CHeraldSystem

/// The daemon's own memory figures, for `herald status`.
enum ProcessMemory {
    /// The resident set (file pages included), in KiB; 0 when it cannot be read.
    static func residentKiB() -> Int { max(0, herald_resident_kib()) }

    /// What the allocator has handed out and not had back, in KiB.
    static func heapInUseKiB() -> Int { herald_heap_in_use_bytes() / 1024 }
}
