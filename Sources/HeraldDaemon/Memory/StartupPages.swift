import CHeraldSystem
import Logging

/// Gives back, once, the memory that only start-up used.
///
/// Starting touches a great deal of code and constant data that an idle daemon does not run again: the Swift
/// runtime's and Foundation's initialisation, opening the permission store, probing and announcing the host
/// name. Those pages are clean copies of the executable's and the libraries' files, mapped with their
/// neighbours (the kernel's fault-around), and they stay resident: about 20 of an idle heraldd's 29 MiB.
/// Once start-up is over, `herald_release_file_pages` unmaps them; what the loop needs again comes back from
/// the page cache on first use.
///
/// Start-up is over when nothing is due for ``quietPeriod`` (longer than the gaps between the host name's
/// announcements), or at the latest ``latest`` after start on a network that keeps the daemon busy.
struct StartupPages {
    static let quietPeriod: Int64 = 3000
    static let latest: Int64 = 30_000

    private let startedAt: Int64
    private(set) var released = false

    init(startedAt: Int64) {
        self.startedAt = startedAt
    }

    /// When the loop must wake up to release the pages if it has not gone quiet by then.
    var deadline: Int64? { released ? nil : startedAt + Self.latest }

    /// Whether to release now, asked each time the loop is about to wait until `nextDeadline`; true once only.
    mutating func isDue(nextDeadline: Int64?, now: Int64) -> Bool {
        guard !released else { return false }
        let quiet = nextDeadline.map { $0 - now >= Self.quietPeriod } ?? true
        guard quiet || now - startedAt >= Self.latest else { return false }
        released = true
        return true
    }

    /// Unmaps the start-up pages. A failure only leaves them resident.
    static func release(logger: Logger) {
        let released = herald_release_file_pages()
        if released < 0 {
            logger.debug("start-up pages not released: /proc/self/smaps is unreadable")
        } else {
            logger.debug("start-up pages released from \(released / 1024) KiB of read-only file mappings")
        }
    }
}
