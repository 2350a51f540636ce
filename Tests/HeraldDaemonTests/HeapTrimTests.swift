import CHeraldSystem
import Glibc
@testable import HeraldDaemon
import Logging
import Testing

@Suite("Heap trim", .serialized)
struct HeapTrimTests {
    @Test("looked at when the loop goes quiet, at most once per interval")
    func checkedWhenQuiet() {
        var trim = HeapTrim()
        let busy = trim.isDue(nextDeadline: 1000 + HeapTrim.quietPeriod - 1, now: 1000)
        let quiet = trim.isDue(nextDeadline: 2000 + HeapTrim.quietPeriod, now: 2000)
        let tooSoon = trim.isDue(nextDeadline: nil, now: 2000 + HeapTrim.interval - 1)
        let later = trim.isDue(nextDeadline: nil, now: 2000 + HeapTrim.interval)
        #expect(!busy && quiet && !tooSoon && later)
    }

    @Test("freed memory leaves the resident set")
    func freedMemoryReturned() throws {
        // 8 MiB in blocks below the allocator's mmap threshold, all but a guard block at the end freed: the
        // freed memory sits inside the heap, where the allocator keeps it.
        let blocks = (0..<8192).map { _ in malloc(1024)! }
        let guardBlock = malloc(1024)
        defer { free(guardBlock) }
        for block in blocks { memset(block, 1, 1024) }
        for block in blocks { free(block) }
        #expect(herald_heap_free_bytes() >= 8 << 20)
        let before = try #require(anonymousKilobytes())

        var trim = HeapTrim()
        trim.trimIfWorthIt(logger: Logger(label: "test"))
        let after = try #require(anonymousKilobytes())
        #expect(before - after >= 6 * 1024)
    }
}

/// The process's anonymous memory in KiB, from /proc/self/smaps_rollup.
private func anonymousKilobytes() -> Int? {
    procLines("/proc/self/smaps_rollup")?.lazy.compactMap { kilobytes(in: $0, field: "Anonymous") }.first
}
