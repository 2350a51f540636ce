/// The largest mDNS message to send, counted as a whole IP datagram (RFC 6762 §17: at most 9000 bytes
/// including the IP and UDP headers, and no more than the interface's MTU allows).
public struct MessageSizeLimit: Hashable, Sendable {
    /// Bytes of IP and UDP headers (IPv4 without options: 20 + 8; IPv6: 40 + 8).
    public static let ipv4Overhead = 28
    public static let ipv6Overhead = 48
    /// RFC 6762 §17.
    public static let maximumDatagram = 9000
    /// The smallest limit accepted (an Ethernet MTU).
    public static let minimumDatagram = 1500

    /// The datagram size, headers included.
    public let datagramSize: Int

    /// A limit clamped to 1500…9000 bytes.
    public init(datagramSize: Int) {
        self.datagramSize = min(max(datagramSize, Self.minimumDatagram), Self.maximumDatagram)
    }

    /// The RFC 6762 maximum of 9000 bytes.
    public static let `default` = MessageSizeLimit(datagramSize: maximumDatagram)

    /// The room left for the DNS message itself.
    public func payloadLimit(ipv6: Bool) -> Int {
        datagramSize - (ipv6 ? Self.ipv6Overhead : Self.ipv4Overhead)
    }
}
