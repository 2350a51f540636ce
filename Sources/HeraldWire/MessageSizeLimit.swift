/// The largest mDNS message to send, counted as a whole IP datagram (RFC 6762 §17: at most 9000 bytes
/// including the IP and UDP headers). Only a message carrying a single record may be that large: one larger than
/// the link's MTU goes out in fragments, and §17 allows one record at most in a fragmented datagram, so messages
/// with several records stay within the link's MTU (``sharedPayloadLimit(ipv6:mtu:)``).
public struct MessageSizeLimit: Hashable, Sendable {
    /// Bytes of IP and UDP headers (IPv4 without options: 20 + 8; IPv6: 40 + 8).
    public static let ipv4Overhead = 28
    public static let ipv6Overhead = 48
    /// RFC 6762 §17.
    public static let maximumDatagram = 9000
    /// The smallest limit accepted (an Ethernet MTU).
    public static let minimumDatagram = 1500
    /// The MTU of an Ethernet link, assumed where a link's own is not known.
    public static let ethernetMTU = 1500
    /// The smallest MTU taken at its word (the datagram size every IPv4 host must accept, RFC 791); a link
    /// reporting less is treated as having this.
    public static let smallestMTU = 576

    /// The datagram size, headers included.
    public let datagramSize: Int

    /// A limit clamped to 1500…9000 bytes.
    public init(datagramSize: Int) {
        self.datagramSize = min(max(datagramSize, Self.minimumDatagram), Self.maximumDatagram)
    }

    /// The RFC 6762 maximum of 9000 bytes.
    public static let `default` = MessageSizeLimit(datagramSize: maximumDatagram)

    /// The room left for the DNS message itself, when it carries one record (or one probe) too big for less.
    public func payloadLimit(ipv6: Bool) -> Int {
        datagramSize - Self.overhead(ipv6: ipv6)
    }

    /// The room for a message that carries several records on a link with this MTU: what fits in one packet, so
    /// that it is never fragmented (RFC 6762 §17), and within the limit (which matters on links with jumbo frames).
    public func sharedPayloadLimit(ipv6: Bool, mtu: Int = ethernetMTU) -> Int {
        min(max(mtu, Self.smallestMTU), datagramSize) - Self.overhead(ipv6: ipv6)
    }

    private static func overhead(ipv6: Bool) -> Int { ipv6 ? ipv6Overhead : ipv4Overhead }

    /// The most data a record whose owner name takes `ownerLength` wire bytes can carry and still be sent, alone, in
    /// one message over either IP family: the IPv6 payload less the header (12 bytes), the owner name, and the
    /// record's type, class, TTL and data length (10 bytes).
    public func largestRecordData(ownerLength: Int) -> Int {
        payloadLimit(ipv6: true) - 12 - ownerLength - 10
    }

    /// The most data a record of a service of `type` (`_http._tcp.local.`), such as its TXT record, can carry under
    /// any instance name the service may get: renaming keeps the instance label within 63 bytes.
    public func largestServiceRecordData(type: DNSName) -> Int {
        largestRecordData(ownerLength: 1 + 63 + type.wireLength)
    }
}
