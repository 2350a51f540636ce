import Logging
import Synchronization

/// Gives back, after each step of start-up, the pages of code and constant data that the step mapped.
///
/// Start-up is a series of steps that each run megabytes of code the next steps do not: the dynamic loader and the
/// Swift runtime's set-up, the command-line parser, reading the configuration, opening the permission store,
/// checking it and loading its rules, opening the network sockets, opening the app and control sockets. Each step
/// maps 2–7 MiB of code and constant data (3–10 MiB where the kernel maps 64 KiB around every page touched, see
/// `herald_map_file_pages_one_by_one`). Releasing them as each step ends (the same unmapping as ``IdlePages``: the
/// pages stay in the page cache) makes heraldd's peak resident set at start that of its largest step, not of all
/// steps together: for heraldd's release build 5.6 MiB (11 MiB with the kernel's fault-around), against 15.5 MiB
/// with neither (VmHWM, with an empty state directory; Benchmarks/README.md, 2026-11-27). Each step maps back what
/// it shares with the last: with reading `/proc/self/smaps`, the releases add about 5 ms to start-up (measured with
/// the Foundation image: 16 to 21 ms until the control socket accepts).
package enum StartupPages {
    /// What releases made before logging was set up would have logged, after how file pages map (decided before
    /// the first release); logged with the first release that can.
    private static let unlogged = Mutex<[String]>(["start-up: " + ProcessMemory.filePageMapping()])

    /// Releases the pages mapped so far and logs (at debug level) the resident set before and after. `logger` is
    /// nil only before logging is set up.
    package static func release(after step: String, logger: Logger? = nil) {
        let before = ProcessMemory.residentKiB()
        let line =
            ProcessMemory.releaseFilePages() == nil
            ? "start-up: pages not released after \(step): /proc/self/smaps is unreadable"
            : "start-up: pages released after \(step): resident \(before) KiB -> \(ProcessMemory.residentKiB()) KiB"
        guard let logger else {
            unlogged.withLock { $0.append(line) }
            return
        }
        let earlier = unlogged.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
        for text in earlier + [line] { logger.debug("\(text)") }
    }
}
