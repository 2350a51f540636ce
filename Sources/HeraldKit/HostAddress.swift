import HeraldWire

/// An IPv4 or IPv6 address of a host, with the interface it was found on.
public struct HostAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 bytes (IPv6), in network order.
    public var bytes: [UInt8]
    /// The index of the interface the address was seen on (needed to reach IPv6 link-local addresses).
    public var interfaceIndex: UInt32

    /// An address from its 4 or 16 bytes and the interface it was seen on.
    public init(bytes: [UInt8], interfaceIndex: UInt32) {
        self.bytes = bytes
        self.interfaceIndex = interfaceIndex
    }

    /// True for an IPv6 address (16 bytes).
    public var isIPv6: Bool { bytes.count == 16 }

    /// The address as text, such as `192.0.2.7` or `fe80::1` (without a zone).
    public var text: String {
        if bytes.count == 4 { return IPv4Address(bytes[0], bytes[1], bytes[2], bytes[3]).description }
        if let address = IPv6Address(bytes: bytes) { return address.description }
        return bytes.map { String($0) }.joined(separator: ".")
    }

    public var description: String { text }
}
