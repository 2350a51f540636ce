import Logging

/// Gives back the pages of code and constant data that an idle daemon does not use.
///
/// Starting touches a great deal of code and constant data that an idle daemon does not run again: the Swift
/// runtime's and Foundation's initialisation, opening the permission store, probing and announcing the host
/// name; so does serving clients. Those pages are clean copies of the executable's and the libraries' files (mapped
/// with their neighbours where the kernel cannot be asked to map them one at a time: its fault-around), and they stay
/// mapped: in the release build, 14 MiB of file pages after start, so that an idle heraldd would hold 15.5 MiB
/// instead of 2.4 (Benchmarks/README.md, 2026-11-27).
/// `ProcessMemory.releaseFilePages` unmaps them; they stay in the page cache, and what the loop needs again is mapped
/// back on first use (minor faults, a few milliseconds of them for a burst of work). Start-up releases what each of
/// its steps mapped as the step ends (``StartupPages``); this type releases what the running daemon maps.
///
/// Released once start-up is over: when nothing is due for ``quietPeriod`` (longer than the gaps between the host
/// name's announcements), or at the latest ``latest`` after start on a network that keeps the daemon busy. Once
/// more when the loop has again been quiet for ``quietPeriod``: what runs right after the first release, some of
/// it for the first time, maps back about 2 MiB (measured with heraldd's release build) that a daemon with nothing
/// to do does not touch again. Then again after each burst of work (clients served, a network's records cached),
/// once the loop has done nothing for ``quietPeriod`` and nothing is due within it, at most every ``interval``:
/// serving 20 clients that resolve 3,400 services maps about 4 MiB of code, which would otherwise stay for as long
/// as the daemon has nothing more to do. Faulting a burst's pages back in costs a few milliseconds, so a release
/// every ``interval`` at most costs well under a thousandth of a core. A turn that only pinged the service
/// manager's watchdog is not work: it runs a few pages of code, and counting it would bring a release, and
/// faulting back in, every interval for a daemon with nothing to do.
struct IdlePages {
    static let quietPeriod: Int64 = 3000
    static let latest: Int64 = 30_000
    static let interval: Int64 = 10_000

    private let startedAt: Int64
    private var lastRelease: Int64?
    /// Whether the release that follows the first one has been made.
    private var settled = false
    /// Whether the loop has worked since the last release (each of its turns asks ``isDue(nextDeadline:now:worked:)``).
    private var workedSinceRelease = false
    /// When the loop last worked after the last release.
    private var lastWork: Int64 = 0

    init(startedAt: Int64) {
        self.startedAt = startedAt
    }

    /// When the loop must wake up to look again: at the latest time for the start-up pages, a quiet period after
    /// the first release, then, if the loop has worked since, a quiet period after its last work (never before the
    /// interval since the last release is over).
    func deadline(now: Int64) -> Int64? {
        guard let lastRelease else { return startedAt + Self.latest }
        if !settled { return max(lastRelease, now) + Self.quietPeriod }
        return workedSinceRelease ? max(lastRelease + Self.interval, lastWork + Self.quietPeriod) : nil
    }

    /// Whether to release now, asked each time the loop is about to wait until `nextDeadline`; `worked` tells
    /// whether the loop handled anything (a socket, an engine timer, decisions to record) since it last asked.
    mutating func isDue(nextDeadline: Int64?, now: Int64, worked: Bool) -> Bool {
        if worked, lastRelease != nil {
            workedSinceRelease = true
            lastWork = now
        }
        let quiet = nextDeadline.map { $0 - now >= Self.quietPeriod } ?? true
        let due: Bool
        if let lastRelease, !settled {
            due = quiet && now - lastRelease >= Self.quietPeriod
            settled = due
        } else if let lastRelease {
            due =
                quiet && workedSinceRelease && now - lastWork >= Self.quietPeriod
                && now - lastRelease >= Self.interval
        } else {
            due = quiet || now - startedAt >= Self.latest
        }
        if due {
            lastRelease = now
            workedSinceRelease = false
        }
        return due
    }

    /// Unmaps the pages. A failure only leaves them resident.
    static func release(logger: Logger) {
        guard let released = ProcessMemory.releaseFilePages() else {
            logger.debug("file pages not released: /proc/self/smaps is unreadable")
            return
        }
        logger.debug("pages released from \(released) KiB of read-only file mappings")
    }
}
