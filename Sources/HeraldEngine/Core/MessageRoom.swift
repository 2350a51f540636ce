/// How many bytes of DNS message a packet on a link may hold (RFC 6762 §17).
struct MessageRoom: Hashable, Sendable {
    /// For a message with several records: within an Ethernet frame, so never fragmented.
    var shared: Int
    /// For a message with one record, or one probe, too big for `shared`: it may go out in fragments.
    var alone: Int
}
