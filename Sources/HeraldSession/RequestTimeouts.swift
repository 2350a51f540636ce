import HeraldIPC

/// Record queries and address lookups made with `kDNSServiceFlagsTimeout`: as with mDNSResponder, each ends
/// ``duration`` after it was made, whether it was answered or not, with a last reply carrying
/// `kDNSServiceErr_Timeout` (`dns_sd.h`: "the query is stopped after a certain number of seconds").
struct RequestTimeouts {
    /// mDNSResponder's time for a multicast question (its `DEFAULT_MCAST_TIMEOUT`).
    static let duration: Int64 = 5_000

    struct Entry {
        let deadline: Int64
        let connection: ConnectionID
        /// The operation as it was when the clock started: one cancelled (or replaced under the same context) since
        /// is not the one that times out.
        let operation: SessionOperation
        /// The record types asked for (an address lookup's A and AAAA get a Timeout reply each).
        let types: [UInt16]
    }

    private var entries: [Entry] = []

    /// Ends `operation` of `connection` ``duration`` after `now`.
    mutating func add(_ operation: SessionOperation, of connection: ConnectionID, types: [UInt16], now: Int64) {
        entries.append(Entry(deadline: now + Self.duration, connection: connection, operation: operation, types: types))
    }

    /// The entries due at `now`, taken out.
    mutating func takeDue(at now: Int64) -> [Entry] {
        // Every request waits the same time, so the entries are in the order of their deadlines.
        let count = entries.prefix { $0.deadline <= now }.count
        defer { entries.removeFirst(count) }
        return Array(entries.prefix(count))
    }

    /// When the next request's time ends.
    var nextDeadline: Int64? { entries.first?.deadline }

    /// The number of requests waiting for their time to end.
    var count: Int { entries.count }
}
