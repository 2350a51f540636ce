import CHeraldSystem
import Foundation
import Glibc
import Testing

@testable import HeraldDaemon

/// Serialized: a release in one test would unmap the pages another test has just mapped and is counting.
@Suite("Idle pages", .serialized)
struct IdlePagesTests {
    @Test("released when start-up goes quiet, or at the latest while the loop stays busy")
    func releasedWhenStartupIsQuiet() {
        var pages = IdlePages(startedAt: 1000)
        #expect(pages.deadline(now: 1000) == 1000 + IdlePages.latest)
        // Probing and announcing: something is due within the quiet period.
        let probing = pages.isDue(nextDeadline: 1250, now: 1000, worked: true)
        let announcing = pages.isDue(nextDeadline: 3000 + IdlePages.quietPeriod - 1, now: 3000, worked: true)
        #expect(!probing && !announcing)
        // Nothing due for the quiet period: released.
        let quiet = pages.isDue(nextDeadline: 4000 + IdlePages.quietPeriod, now: 4000, worked: true)
        #expect(quiet)
        // Once more a quiet period later, for what the first release's aftermath mapped back; the loop is woken
        // for it, and it waits while the loop is busy.
        let settling = 4000 + IdlePages.quietPeriod
        #expect(pages.deadline(now: 4000) == settling)
        let tooEarly = pages.isDue(nextDeadline: nil, now: settling - 1, worked: true)
        let busy = pages.isDue(nextDeadline: settling + 10, now: settling, worked: true)
        #expect(!tooEarly && !busy)
        #expect(pages.deadline(now: settling) == settling + IdlePages.quietPeriod)
        let settled = pages.isDue(nextDeadline: nil, now: settling + 20, worked: true)
        #expect(settled)
        // An idle loop is not woken for it again.
        #expect(pages.deadline(now: settling + 20) == nil)

        // With nothing to probe (no interface yet), start-up is over at the first turn.
        var nothingToDo = IdlePages(startedAt: 0)
        let first = nothingToDo.isDue(nextDeadline: nil, now: 10, worked: true)
        #expect(first)
        // A loop never quiet for long releases at the latest time.
        var neverQuiet = IdlePages(startedAt: 0)
        let before = neverQuiet.isDue(nextDeadline: IdlePages.latest + 9, now: IdlePages.latest - 1, worked: true)
        let atLatest = neverQuiet.isDue(nextDeadline: IdlePages.latest + 10, now: IdlePages.latest, worked: true)
        #expect(!before && atLatest)
    }

    @Test("released again once later work has gone quiet, at most every interval")
    func releasedAgainAfterWork() {
        var pages = IdlePages(startedAt: 0)
        let first = pages.isDue(nextDeadline: nil, now: 2000 - IdlePages.quietPeriod, worked: true)
        let settled = pages.isDue(nextDeadline: nil, now: 5000, worked: true)
        #expect(first && settled)
        // A client comes and goes: the loop turns, then is quiet, too soon for another release.
        let tooSoon = pages.isDue(nextDeadline: nil, now: 6000, worked: true)
        #expect(!tooSoon)
        // So the loop is asked to wake when the interval is over, and releases then if it is quiet.
        #expect(pages.deadline(now: 6000) == 5000 + IdlePages.interval)
        let busy = pages.isDue(
            nextDeadline: 5000 + IdlePages.interval + 10, now: 5000 + IdlePages.interval, worked: true)
        #expect(!busy)
        #expect(pages.deadline(now: 5000 + IdlePages.interval) == 5000 + IdlePages.interval + IdlePages.quietPeriod)
        // A turn that works is never the one that releases, however long ago the last release was: the pages go
        // only after a quiet period with nothing handled.
        let stillServing = pages.isDue(nextDeadline: nil, now: 5000 + IdlePages.interval + 20, worked: true)
        #expect(!stillServing)
        let lastWork = 5000 + IdlePages.interval + 20
        #expect(pages.deadline(now: lastWork) == lastWork + IdlePages.quietPeriod)
        let justBefore = pages.isDue(nextDeadline: nil, now: lastWork + IdlePages.quietPeriod - 1, worked: false)
        #expect(!justBefore)
        let later = pages.isDue(nextDeadline: nil, now: lastWork + IdlePages.quietPeriod, worked: false)
        #expect(later)
        #expect(pages.deadline(now: lastWork + IdlePages.quietPeriod) == nil)
    }

    @Test("turns that did no work (the watchdog's pings) bring no release; the next work does, once quiet")
    func watchdogPingsAreNotWork() {
        var pages = IdlePages(startedAt: 0)
        let first = pages.isDue(nextDeadline: nil, now: 2000, worked: true)
        let settled = pages.isDue(nextDeadline: nil, now: 5000, worked: false)
        #expect(first && settled)
        // A watchdog of 30 s wakes the loop every 15 s, long after the interval; nothing else happens.
        var released: [Int64] = []
        for ping in stride(from: Int64(20_000), through: 200_000, by: 15_000) {
            if pages.isDue(nextDeadline: ping + 15_000, now: ping, worked: false) { released.append(ping) }
            #expect(pages.deadline(now: ping) == nil)
        }
        #expect(released.isEmpty, "released at \(released)")
        // A client comes: that is work, and once the loop is quiet again the pages go.
        let serving = pages.isDue(nextDeadline: 200_100, now: 200_050, worked: true)
        #expect(!serving)
        #expect(pages.deadline(now: 200_050) == 200_050 + IdlePages.quietPeriod)
        let quietAgain = pages.isDue(nextDeadline: 215_000, now: 200_050 + IdlePages.quietPeriod, worked: false)
        #expect(quietAgain)
    }

    @Test("a read-only file mapping's pages leave the resident set and read back the same")
    func readOnlyMappingReleased() throws {
        let file = try TemporaryFile(bytes: 64 * 1024)
        try file.withMapping(protection: PROT_READ) { bytes in
            var sum = 0
            for offset in stride(from: 0, to: file.size, by: 4096) { sum += Int(bytes[offset]) }
            #expect(residentKilobytes(at: bytes) == 64)

            #expect(herald_release_file_pages() > 0)
            #expect(residentKilobytes(at: bytes) == 0)
            var again = 0
            for offset in stride(from: 0, to: file.size, by: 4096) { again += Int(bytes[offset]) }
            #expect(again == sum)
            #expect(bytes[4096 + 7] == file.byte(at: 4096 + 7))
        }
    }

    @Test("a read-only mapping with a page copied on write keeps what was written")
    func copiedOnWriteKept() throws {
        let file = try TemporaryFile(bytes: 16 * 1024)
        try file.withMapping(protection: PROT_READ | PROT_WRITE) { bytes in
            // As the dynamic loader does with relocated sections: written, then made read-only.
            bytes[8192] = ~file.byte(at: 8192)
            #expect(mprotect(bytes, file.size, PROT_READ) == 0)

            _ = herald_release_file_pages()
            #expect(bytes[8192] == ~file.byte(at: 8192))
        }
    }

    @Test("a writable file mapping is left alone, the pages written and those only read")
    func writableMappingKept() throws {
        let file = try TemporaryFile(bytes: 16 * 1024)
        try file.withMapping(protection: PROT_READ | PROT_WRITE) { bytes in
            // Only read so far: nothing was copied on write, and still it is not released (it could be written to).
            #expect(bytes[0] == file.byte(at: 0) && bytes[4096] == file.byte(at: 4096))
            let resident = try #require(residentKilobytes(at: bytes))
            #expect(resident > 0)
            _ = herald_release_file_pages()
            #expect(residentKilobytes(at: bytes) == resident)

            bytes[8192] = ~file.byte(at: 8192)
            _ = herald_release_file_pages()
            #expect(bytes[8192] == ~file.byte(at: 8192))
        }
    }

    @Test("once file mappings map one page at a time, a first read maps that page alone, not the 64 KiB around it")
    func filePagesMapOneByOne() throws {
        let file = try TemporaryFile(bytes: 256 * 1024)
        try file.withMapping(protection: PROT_READ) { bytes in
            let outcome = herald_map_file_pages_one_by_one()
            // The kernel resolves write-protect faults itself from Linux 6.7 on x86-64 (6.10 on arm64); before, it
            // refuses the userfaultfd's feature (EINVAL), and mappings keep the kernel's fault-around.
            let kernel = ProcessInfo.processInfo.operatingSystemVersion
            #if arch(x86_64)
                let supported = (kernel.majorVersion, kernel.minorVersion) >= (6, 7)
            #else
                let supported = (kernel.majorVersion, kernel.minorVersion) >= (6, 10)
            #endif
            guard supported || outcome == 0 else {
                #expect(
                    [EINVAL, ENOSYS, EPERM].contains(outcome),
                    "userfaultfd refused with errno \(outcome) on \(kernel)")
                #expect(herald_file_pages_one_by_one_error() == outcome)
                return
            }
            #expect(outcome == 0, "errno \(outcome) on \(kernel)")
            #expect(herald_file_pages_one_by_one_error() == 0)
            #expect(bytes[128 * 1024 + 5] == file.byte(at: 128 * 1024 + 5))
            #expect(residentKilobytes(at: bytes) == 4)
            // What is read maps as it is read, and reads back the same.
            #expect(bytes[128 * 1024 + 4096] == file.byte(at: 128 * 1024 + 4096))
            #expect(residentKilobytes(at: bytes) == 8)
        }
    }
}

/// A file of patterned bytes in the temporary directory, removed when the value goes away.
private final class TemporaryFile {
    let path: String
    let size: Int
    private let descriptor: Int32

    init(bytes size: Int) throws {
        var template = Array("/tmp/herald-pages-XXXXXX".utf8CString)
        descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw Failure("mkstemp failed") }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.size = size
        let contents = (0..<size).map { Self.pattern($0) }
        guard contents.withUnsafeBytes({ write(descriptor, $0.baseAddress, size) }) == size else {
            throw Failure("write failed")
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    func byte(at offset: Int) -> UInt8 { Self.pattern(offset) }

    /// Runs `body` on a private mapping of the whole file, unmapped afterwards.
    func withMapping(protection: Int32, _ body: (UnsafeMutablePointer<UInt8>) throws -> Void) throws {
        let base = mmap(nil, size, protection, MAP_PRIVATE, descriptor, 0)
        guard let base, base != MAP_FAILED else { throw Failure("mmap failed") }
        defer { munmap(base, size) }
        try body(base.assumingMemoryBound(to: UInt8.self))
    }

    private static func pattern(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 31 &+ offset >> 12) }

    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

/// The Rss of the mapping that starts at `address`, from /proc/self/smaps.
private func residentKilobytes(at address: UnsafeRawPointer) -> Int? {
    guard let lines = procLines("/proc/self/smaps") else { return nil }
    let start = String(UInt(bitPattern: address), radix: 16) + "-"
    guard let header = lines.firstIndex(where: { $0.hasPrefix(start) }) else { return nil }
    return lines[header...].lazy.compactMap { kilobytes(in: $0, field: "Rss") }.first
}
