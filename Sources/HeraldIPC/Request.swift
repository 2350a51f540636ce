/// Any request a client can send, typed.
public enum Request: Hashable, Sendable {
    case connection(ConnectionRequest)
    case registerRecord(RegisterRecordRequest)
    case removeRecord(RemoveRecordRequest)
    case enumeration(EnumerationRequest)
    case registerService(RegisterServiceRequest)
    case browse(BrowseRequest)
    case resolve(ResolveRequest)
    case query(QueryRecordRequest)
    case reconfirm(ReconfirmRequest)
    case addRecord(AddRecordRequest)
    case updateRecord(UpdateRecordRequest)
    case setDomain(SetDomainRequest)
    case getProperty(GetPropertyRequest)
    case addrInfo(AddrInfoRequest)
    case cancel(CancelRequest)

    /// The request's message value.
    public var message: any IPCRequestMessage {
        switch self {
        case .connection(let m): return m
        case .registerRecord(let m): return m
        case .removeRecord(let m): return m
        case .enumeration(let m): return m
        case .registerService(let m): return m
        case .browse(let m): return m
        case .resolve(let m): return m
        case .query(let m): return m
        case .reconfirm(let m): return m
        case .addRecord(let m): return m
        case .updateRecord(let m): return m
        case .setDomain(let m): return m
        case .getProperty(let m): return m
        case .addrInfo(let m): return m
        case .cancel(let m): return m
        }
    }

    public var operation: RequestOperation { type(of: message).operation }

    /// Decodes a request from its header and body. Every malformed body is a typed error; nothing traps.
    ///
    /// `connection` says whether an operation already runs on the connection: only then does the body begin
    /// with the error-return path (see `DecodedRequest` for that, the status route and trailing TLVs).
    public static func decode(
        header: IPCHeader, body: [UInt8], connection: IPCConnectionState = .new
    ) throws(IPCDecodeError) -> Request {
        try DecodedRequest.decode(header: header, body: body, connection: connection).request
    }

    /// The complete frame a client sends (see `IPCRequestMessage.encodeFrame`).
    public func encodeFrame(
        context: ClientContext = .zero, flags: IPCFlags = [], connection: IPCConnectionState = .new,
        errorReturnPath: String = "", tlvs: [IPCTLV] = [], maximumDataLength: Int = IPCConstants.maximumDataLength
    ) throws(IPCEncodeError) -> IPCRequestFrame {
        try message.encodeFrame(
            context: context, flags: flags, connection: connection, errorReturnPath: errorReturnPath, tlvs: tlvs,
            maximumDataLength: maximumDataLength)
    }

    static func read(
        _ operation: RequestOperation, from reader: inout IPCBodyReader, header: IPCHeader
    ) throws(IPCDecodeError) -> Request {
        switch operation {
        case .connection: return .connection(try ConnectionRequest(reading: &reader, header: header))
        case .registerRecord: return .registerRecord(try RegisterRecordRequest(reading: &reader, header: header))
        case .removeRecord: return .removeRecord(try RemoveRecordRequest(reading: &reader, header: header))
        case .enumeration: return .enumeration(try EnumerationRequest(reading: &reader, header: header))
        case .registerService:
            return .registerService(try RegisterServiceRequest(reading: &reader, header: header))
        case .browse: return .browse(try BrowseRequest(reading: &reader, header: header))
        case .resolve: return .resolve(try ResolveRequest(reading: &reader, header: header))
        case .query: return .query(try QueryRecordRequest(reading: &reader, header: header))
        case .reconfirm: return .reconfirm(try ReconfirmRequest(reading: &reader, header: header))
        case .addRecord: return .addRecord(try AddRecordRequest(reading: &reader, header: header))
        case .updateRecord: return .updateRecord(try UpdateRecordRequest(reading: &reader, header: header))
        case .setDomain: return .setDomain(try SetDomainRequest(reading: &reader, header: header))
        case .getProperty: return .getProperty(try GetPropertyRequest(reading: &reader, header: header))
        case .addrInfo: return .addrInfo(try AddrInfoRequest(reading: &reader, header: header))
        case .cancel: return .cancel(try CancelRequest(reading: &reader, header: header))
        case .portMapping: throw .unsupportedRequest(.portMapping)
        }
    }
}
