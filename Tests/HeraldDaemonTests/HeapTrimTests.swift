import CHeraldSystem
import Glibc
import Logging
import Testing

@testable import HeraldDaemon

/// Trimming the heap, and the memory figures `herald status` reports, in one serialized suite: each test
/// allocates megabytes or reads figures that another's allocations would move.
@Suite("Heap trim and memory figures", .serialized)
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

    @Test("heap in use, as herald status reports it, follows what is allocated and freed")
    func heapInUseFollowsAllocations() {
        // The figure is the whole process's, and tests of other suites run at the same time: one of them freeing
        // megabytes between two readings hides part of this test's 32 MiB. So up to three attempts, of which one
        // must see them all (with 2 MiB of slack); a figure that does not follow allocations fails every attempt.
        var attempts: [String] = []
        for _ in 0..<3 {
            let before = ProcessMemory.heapInUseKiB()
            let blocks = (0..<16384).map { _ in malloc(2048)! }  // 32 MiB
            let allocated = ProcessMemory.heapInUseKiB()
            for block in blocks { free(block) }
            let freed = ProcessMemory.heapInUseKiB()
            if allocated - before >= 30 * 1024 && allocated - freed >= 30 * 1024 { return }
            attempts.append("before \(before) KiB, allocated \(allocated) KiB, freed \(freed) KiB")
        }
        Issue.record("heap in use did not follow 32 MiB allocated and freed: \(attempts)")
    }

    @Test("the resident set, as herald status reports it, is the kernel's VmRSS")
    func residentMatchesKernel() throws {
        // The kernel's figure is read just before and just after ours: other suites running at the same time move the
        // resident set by megabytes, so ours must lie between the two (with 1 MiB or 5 % of slack), in one of three
        // attempts.
        func kernel() throws -> Int {
            try #require(procLines("/proc/self/status")?.lazy.compactMap { kilobytes(in: $0, field: "VmRSS") }.first)
        }
        var attempts: [String] = []
        for _ in 0..<3 {
            let first = try kernel()
            let reported = ProcessMemory.residentKiB()
            let second = try kernel()
            let slack = max(1024, max(first, second) / 20)
            if reported >= min(first, second) - slack && reported <= max(first, second) + slack { return }
            attempts.append("kernel \(first) then \(second) KiB, reported \(reported) KiB")
        }
        Issue.record("the reported resident set is not the kernel's: \(attempts)")
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
