import CHeraldSystem
import Glibc

/// The daemon's own memory figures, for `herald status`, and the giving back of file pages (`IdlePages`,
/// `StartupPages`).
enum ProcessMemory {
    /// The resident set (file pages included), in KiB; 0 when it cannot be read.
    static func residentKiB() -> Int { max(0, herald_resident_kib()) }

    /// What the allocator has handed out and not had back, in KiB.
    static func heapInUseKiB() -> Int { herald_heap_in_use_bytes() / 1024 }

    /// How the kernel maps the pages of the executable's and the libraries' files, for the log: one at a time, as
    /// heraldd asks before it starts (`herald_map_file_pages_one_by_one`), or 64 KiB at a time and why.
    static func filePageMapping() -> String {
        let error = herald_file_pages_one_by_one_error()
        switch error {
        case 0:
            return "file pages map one at a time (mappings registered with a userfaultfd: no fault-around)"
        case -1:
            return "file pages map 64 KiB at a time (the kernel's fault-around): one at a time was not asked for"
        default:
            let reason = String(cString: strerror(error))
            let hint =
                error == EINVAL
                ? "; write-protection resolved by the kernel needs Linux 6.7 or later (6.10 on arm64)" : ""
            return "file pages map 64 KiB at a time (the kernel's fault-around): userfaultfd refused: \(reason)\(hint)"
        }
    }

    /// Unmaps the clean pages of private read-only file mappings (the pages stay in the page cache and map back on
    /// first use); the KiB those mappings span, or nil when `/proc/self/smaps` is unreadable.
    static func releaseFilePages() -> Int? {
        let released = herald_release_file_pages()
        return released < 0 ? nil : released / 1024
    }
}
