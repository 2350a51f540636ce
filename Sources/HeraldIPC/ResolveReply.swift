/// A resolve result: flags, interface index, error, the instance's full (escaped) name, the target host,
/// the port's two network-order bytes, and the TXT record with its `uint16` length.
public struct ResolveReply: IPCReplyMessage {
    public static let operation = ReplyOperation.resolve

    public var flags: DNSServiceFlags
    public var interfaceIndex: UInt32
    public var error: DNSServiceError
    public var fullname: String
    public var hostTarget: String
    /// The port in host order (sent as its two network-order bytes).
    public var port: UInt16
    public var txt: [UInt8]

    public init(
        flags: DNSServiceFlags = [], interfaceIndex: UInt32 = 0, error: DNSServiceError = .noError,
        fullname: String = "", hostTarget: String = "", port: UInt16 = 0, txt: [UInt8] = []
    ) {
        self.flags = flags
        self.interfaceIndex = interfaceIndex
        self.error = error
        self.fullname = fullname
        self.hostTarget = hostTarget
        self.port = port
        self.txt = txt
    }

    public init(reading reader: inout IPCBodyReader) throws(IPCDecodeError) {
        flags = try reader.readFlags()
        interfaceIndex = try reader.readUInt32(.interfaceIndex)
        error = try reader.readError()
        fullname = try reader.readString(.fullname)
        hostTarget = try reader.readString(.hostTarget)
        port = try reader.readPort()
        txt = try reader.readLengthPrefixedData(length: .txtLength, data: .txtRecord)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeFlags(flags)
        writer.writeUInt32(interfaceIndex)
        writer.writeError(error)
        try writer.writeString(fullname, .fullname)
        try writer.writeString(hostTarget, .hostTarget)
        writer.writePort(port)
        try writer.writeLengthPrefixedData(txt, .txtRecord)
    }
}
