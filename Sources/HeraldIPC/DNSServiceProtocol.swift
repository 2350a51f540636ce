/// The `kDNSServiceProtocol_*` bits: address families for `DNSServiceGetAddrInfo`, transports for port mapping.
public struct DNSServiceProtocol: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let ipv4 = DNSServiceProtocol(rawValue: 0x01)
    public static let ipv6 = DNSServiceProtocol(rawValue: 0x02)
    public static let udp = DNSServiceProtocol(rawValue: 0x10)
    public static let tcp = DNSServiceProtocol(rawValue: 0x20)
}
