/// Any framed reply the daemon sends, typed.
public enum Reply: Hashable, Sendable {
    case enumeration(EnumerationReply)
    case registerService(RegisterServiceReply)
    case browse(BrowseReply)
    case resolve(ResolveReply)
    case query(QueryRecordReply)
    case registerRecord(RegisterRecordReply)
    case addrInfo(AddrInfoReply)
    case asyncError(AsyncErrorReply)

    /// The reply's message value.
    public var message: any IPCReplyMessage {
        switch self {
        case .enumeration(let m): return m
        case .registerService(let m): return m
        case .browse(let m): return m
        case .resolve(let m): return m
        case .query(let m): return m
        case .registerRecord(let m): return m
        case .addrInfo(let m): return m
        case .asyncError(let m): return m
        }
    }

    public var operation: ReplyOperation { type(of: message).operation }

    /// The error word every reply carries.
    public var error: DNSServiceError {
        switch self {
        case .enumeration(let m): return m.error
        case .registerService(let m): return m.error
        case .browse(let m): return m.error
        case .resolve(let m): return m.error
        case .query(let m): return m.error
        case .registerRecord(let m): return m.error
        case .addrInfo(let m): return m.error
        case .asyncError(let m): return m.error
        }
    }

    /// Decodes a reply frame. Port-mapping and framed get-property replies are refused as unsupported; any
    /// other code that is not a reply is unknown.
    public static func decode(header: IPCHeader, body: [UInt8]) throws(IPCDecodeError) -> Reply {
        guard body.count == Int(header.dataLength) else {
            throw .bodyLengthMismatch(declared: header.dataLength, actual: body.count)
        }
        guard let operation = header.replyOperation else { throw .unknownOperation(header.operation) }
        var reader = IPCBodyReader(body)
        switch operation {
        case .enumeration: return .enumeration(try EnumerationReply(reading: &reader))
        case .registerService: return .registerService(try RegisterServiceReply(reading: &reader))
        case .browse: return .browse(try BrowseReply(reading: &reader))
        case .resolve: return .resolve(try ResolveReply(reading: &reader))
        case .query: return .query(try QueryRecordReply(reading: &reader))
        case .registerRecord: return .registerRecord(try RegisterRecordReply(reading: &reader))
        case .addrInfo: return .addrInfo(try AddrInfoReply(reading: &reader))
        case .asyncError: return .asyncError(try AsyncErrorReply(reading: &reader))
        case .getProperty, .portMapping: throw .unsupportedReply(operation)
        }
    }

    /// The reply's bytes (header and body), echoing the request's client context.
    public func encodeFrame(context: ClientContext) throws(IPCEncodeError) -> [UInt8] {
        try message.encodeFrame(context: context)
    }

    /// The reply's frame; the same reply for another request only needs another `header.context`.
    public func frame(context: ClientContext) throws(IPCEncodeError) -> IPCFrame {
        try message.frame(context: context)
    }
}
