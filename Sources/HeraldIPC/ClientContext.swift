/// The 8 opaque client-context bytes of a header: set by the client, echoed unchanged in every reply to the
/// request, and used by clients to route replies on a shared connection.
public struct ClientContext: Hashable, Sendable, CustomStringConvertible {
    /// The 8 bytes in wire order, read as one big-endian number. Only equality is meaningful.
    public var rawValue: UInt64

    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// The context from its 8 wire bytes; nil unless exactly 8 are given.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 8 else { return nil }
        self.rawValue = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// All zeros: what clients send for record updates and removals on a connection with no subordinate
    /// operation.
    public static let zero = ClientContext(rawValue: 0)

    /// The 8 wire bytes.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: rawValue >> (56 - 8 * UInt64($0))) }
    }

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
