/// `DNSServiceEnumerateDomains`: flags (`browseDomains` or `registrationDomains`) and interface index.
public struct EnumerationRequest: IPCRequestMessage {
    public static let operation = RequestOperation.enumeration

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32

    public init(flags: DNSServiceFlags, interfaceIndex: UInt32 = 0) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
    }
}
