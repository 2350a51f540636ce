import HeraldIPC
import Logging

/// Record queries and address lookups made with `kDNSServiceFlagsTimeout`: as with mDNSResponder, each ends
/// ``duration`` after it was made, whether it was answered or not, with a last reply carrying
/// `kDNSServiceErr_Timeout` (`dns_sd.h`: "the query is stopped after a certain number of seconds").
final class RequestTimeouts {
    /// mDNSResponder's time for a multicast question (its `DEFAULT_MCAST_TIMEOUT`).
    static let duration: Int64 = 5_000

    struct Entry {
        let deadline: Int64
        /// Weak: a client that disconnected meanwhile is gone, and its operation with it.
        weak var client: AppClient?
        let operation: AppOperation
        /// The record types asked for (an address lookup's A and AAAA get a Timeout reply each).
        let types: [UInt16]
    }

    private var entries: [Entry] = []
    private var timer: LoopTimer?
    /// What ends the entries due (the app socket server's, given with each entry).
    private var expire: ([Entry]) -> Void = { _ in }

    /// Ends `operation` of `client` ``duration`` from now: `expire` is called with the entries due, on the loop.
    func add(_ operation: AppOperation, of client: AppClient, types: [UInt16], loop: EventLoop, logger: Logger,
             expire: @escaping ([Entry]) -> Void) {
        self.expire = expire
        if timer == nil {
            do {
                timer = try LoopTimer(loop: loop) { [unowned self] in
                    // Every request waits the same time, so the entries are in the order of their deadlines.
                    let now = MonotonicClock.milliseconds()
                    let count = entries.prefix { $0.deadline <= now }.count
                    let due = Array(entries.prefix(count))
                    entries.removeFirst(count)
                    timer?.schedule(at: entries.first?.deadline)
                    self.expire(due)
                }
            } catch {
                logger.error("app socket: cannot make a timer for kDNSServiceFlagsTimeout: \(error)")
                return
            }
        }
        let deadline = MonotonicClock.milliseconds() + Self.duration
        entries.append(Entry(deadline: deadline, client: client, operation: operation, types: types))
        if entries.count == 1 { timer?.schedule(at: deadline) }
    }

    /// The number of requests waiting for their time to end.
    var count: Int { entries.count }
}
