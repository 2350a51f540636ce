/// `DNSServiceCreateConnection`: opens a connection that later requests share. Empty body.
public struct ConnectionRequest: IPCRequestMessage {
    public static let operation = RequestOperation.connection

    public init() {}

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {}

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {}
}
