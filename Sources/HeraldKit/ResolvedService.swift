/// What resolving a service instance gives: where to connect, and its TXT attributes.
public struct ResolvedService: Hashable, Sendable, CustomStringConvertible {
    /// The instance that was resolved.
    public var instance: ServiceInstance
    /// The target host, such as `studio.local.`.
    public var host: String
    /// The port to connect to.
    public var port: UInt16
    /// The TXT record exactly as published.
    public var txtRecord: [UInt8]
    /// The interface the answer came from.
    public var interfaceIndex: UInt32
    /// The host's addresses found by the lookup that follows the resolve (empty when none answered in time).
    public var addresses: [HostAddress]

    /// The TXT record's attributes (RFC 6763 §6).
    public var txt: TXTDictionary { TXTDictionary(rdata: txtRecord) }

    /// A resolution with every field given.
    public init(
        instance: ServiceInstance, host: String, port: UInt16, txtRecord: [UInt8], interfaceIndex: UInt32,
        addresses: [HostAddress]
    ) {
        self.instance = instance
        self.host = host
        self.port = port
        self.txtRecord = txtRecord
        self.interfaceIndex = interfaceIndex
        self.addresses = addresses
    }

    public var description: String {
        "\(instance) at \(host):\(port) \(addresses.map(\.text)) \(txt)"
    }
}
