/// HeraldWire: the DNS wire format as multicast DNS (RFC 6762) and DNS-SD (RFC 6763) use it.
///
/// Pure values with no I/O: ``DNSMessage`` parsed from and serialized to bytes, ``DNSName`` with
/// case-insensitive comparison and presentation escapes, record data for the types mDNS needs and opaque
/// bytes for all others, ``TXTRecord`` key/value rules, and the DNS-SD naming helpers ``ServiceType`` and
/// ``ServiceInstanceName``.
public enum HeraldWire {
    /// The mDNS UDP port (RFC 6762 §3).
    public static let mdnsPort: UInt16 = 5353
    /// The IPv4 mDNS group (RFC 6762 §3).
    public static let ipv4Group = IPv4Address(224, 0, 0, 251)
    /// The IPv6 mDNS group (RFC 6762 §3).
    public static let ipv6Group = IPv6Address(high: 0xFF02_0000_0000_0000, low: 0xFB)
}
