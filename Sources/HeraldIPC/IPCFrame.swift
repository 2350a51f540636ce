/// One complete message: a header and the body it announces.
public struct IPCFrame: Hashable, Sendable {
    public var header: IPCHeader
    public var body: [UInt8]

    public init(header: IPCHeader, body: [UInt8]) {
        self.header = header
        self.body = body
    }

    /// Header and body as sent on the socket.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(IPCHeader.length + body.count)
        header.write(to: &bytes)
        bytes.append(contentsOf: body)
        return bytes
    }
}
