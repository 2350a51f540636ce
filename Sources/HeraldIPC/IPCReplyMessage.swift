/// A typed reply body. Every reply body begins with the flags, interface index and error code words
/// (mDNSResponder's `reply_hdr`); the reply header has `ipc_flags` 0, `reg_index` 0 and the request's client
/// context.
public protocol IPCReplyMessage: Hashable, Sendable {
    /// The header `op` of this reply.
    static var operation: ReplyOperation { get }
    /// Reads the body; bytes after the known fields (trailing TLVs of newer daemons) are ignored.
    init(reading reader: inout IPCBodyReader) throws(IPCDecodeError)
    /// Appends the body.
    func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError)
}

extension IPCReplyMessage {
    /// The reply frame, echoing the request's client context.
    public func frame(context: ClientContext) throws(IPCEncodeError) -> IPCFrame {
        var writer = IPCBodyWriter()
        try write(to: &writer)
        guard writer.bytes.count <= IPCConstants.maximumDataLength else {
            throw .messageTooLarge(length: writer.bytes.count, maximum: IPCConstants.maximumDataLength)
        }
        let header = IPCHeader(
            dataLength: UInt32(writer.bytes.count), operation: Self.operation.rawValue, context: context)
        return IPCFrame(header: header, body: writer.bytes)
    }

    /// The reply's bytes (header and body), echoing the request's client context.
    public func encodeFrame(context: ClientContext) throws(IPCEncodeError) -> [UInt8] {
        try frame(context: context).encoded
    }

    /// Decodes this reply type from a frame, checking the operation and the body length.
    public static func decode(header: IPCHeader, body: [UInt8]) throws(IPCDecodeError) -> Self {
        guard header.operation == operation.rawValue else {
            throw .operationMismatch(expected: operation.rawValue, found: header.operation)
        }
        guard body.count == Int(header.dataLength) else {
            throw .bodyLengthMismatch(declared: header.dataLength, actual: body.count)
        }
        var reader = IPCBodyReader(body)
        return try Self(reading: &reader)
    }
}
