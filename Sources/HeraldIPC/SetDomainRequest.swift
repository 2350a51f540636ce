/// `DNSServiceSetDefaultDomainForUser`: flags and a domain. mDNSResponder only checks and logs it.
public struct SetDomainRequest: IPCRequestMessage {
    public static let operation = RequestOperation.setDomain

    public var flags: DNSServiceFlags
    public var domain: String

    public init(flags: DNSServiceFlags = [], domain: String) {
        self.flags = flags
        self.domain = domain
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        domain = try reader.readString(.domain)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        try writer.writeString(domain, .domain)
    }
}
