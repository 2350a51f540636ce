import CHeraldSystem
import Logging

/// Gives the kernel back the memory the daemon has freed.
///
/// glibc's allocator keeps what the program frees for later use and returns to the kernel only what sits at the
/// top of its heap. After a burst of work (clients that browsed and resolved thousands of services and left,
/// records expired) megabytes of freed memory stay resident: with 10,000 records cached through clients, about
/// 6 MiB, more than the records themselves. When the loop goes quiet, and at most every ``interval``, the heap
/// is trimmed if it holds at least ``threshold`` free bytes and something was allocated or freed since the last
/// trim (the allocator counts trimmed memory as free still).
struct HeapTrim {
    static let quietPeriod: Int64 = 1000
    static let interval: Int64 = 5000
    static let threshold = 1 << 20

    private var lastCheck: Int64?
    private var freeAfterLastTrim: Int?

    /// Whether to look at the heap now, asked each time the loop is about to wait until `nextDeadline`.
    mutating func isDue(nextDeadline: Int64?, now: Int64) -> Bool {
        if let lastCheck, now - lastCheck < Self.interval { return false }
        guard nextDeadline.map({ $0 - now >= Self.quietPeriod }) ?? true else { return false }
        lastCheck = now
        return true
    }

    /// Trims the heap when enough of it is free.
    mutating func trimIfWorthIt(logger: Logger) {
        let free = herald_heap_free_bytes()
        guard free >= Self.threshold, free != freeAfterLastTrim else { return }
        _ = herald_heap_trim()
        freeAfterLastTrim = herald_heap_free_bytes()
        logger.debug("heap trimmed: \(free / 1024) KiB free")
    }
}
