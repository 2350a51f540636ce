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

    /// Ends `operation` of `client` at `deadline` (monotonic milliseconds): `expire` is called with the entries
    /// due, on the loop.
    func add(_ operation: AppOperation, of client: AppClient, types: [UInt16], deadline: Int64, loop: EventLoop,
             logger: Logger,
             expire: @escaping ([Entry]) -> Void) {
        if timer == nil {
            do {
                timer = try LoopTimer(loop: loop) { [unowned self] in
                    let now = MonotonicClock.milliseconds()
                    let due = entries.filter { $0.deadline <= now }
                    entries.removeAll { $0.deadline <= now }
                    timer?.schedule(at: entries.map(\.deadline).min())
                    expire(due)
                }
            } catch {
                logger.error("app socket: cannot make a timer for kDNSServiceFlagsTimeout: \(error)")
                return
            }
        }
        entries.append(Entry(deadline: deadline, client: client, operation: operation, types: types))
        timer?.schedule(at: entries.map(\.deadline).min())
    }

    /// The number of requests waiting for their time to end.
    var count: Int { entries.count }
}
