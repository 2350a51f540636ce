/// A typed request body: the fields one operation carries after any error-return path.
public protocol IPCRequestMessage: Hashable, Sendable {
    /// The header `op` of this request.
    static var operation: RequestOperation { get }
    /// Reads the request's standard fields; `header` supplies `reg_index` to record operations.
    init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError)
    /// Appends the request's standard fields.
    func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError)
    /// The header `reg_index` this request is sent with (0 unless it is a record operation).
    var registrationIndex: UInt32 { get }
}

extension IPCRequestMessage {
    public var registrationIndex: UInt32 { 0 }

    /// The complete frame a client sends for this request (see `IPCRequestFrame`).
    ///
    /// - Parameters:
    ///   - context: the client context the daemon echoes in replies.
    ///   - flags: header flags; `trailingTLVs` is added when `tlvs` is not empty.
    ///   - connection: `.established` for subordinate and record operations, which then begin with the
    ///     error-return path (unless `flags` has `noErrorSocket`).
    ///   - errorReturnPath: the path written there; empty (the default) means a socket passed with
    ///     `SCM_RIGHTS`.
    public func encodeFrame(
        context: ClientContext = .zero, flags: IPCFlags = [], connection: IPCConnectionState = .new,
        errorReturnPath: String = "", tlvs: [IPCTLV] = [], maximumDataLength: Int = IPCConstants.maximumDataLength
    ) throws(IPCEncodeError) -> IPCRequestFrame {
        if connection == .new && Self.operation.requiresEstablishedConnection {
            throw .requiresEstablishedConnection(Self.operation)
        }
        var flags = flags
        if !tlvs.isEmpty { flags.insert(.trailingTLVs) }
        var writer = IPCBodyWriter()
        let placeholder = connection.bodyStartsWithErrorReturnPath(
            operation: Self.operation.rawValue, flags: flags)
        if placeholder {
            try writer.writeString(
                errorReturnPath, .errorReturnPath, maximumLength: IPCConstants.maximumErrorReturnPathLength)
        }
        try write(to: &writer)
        for tlv in tlvs { try tlv.write(to: &writer) }
        guard writer.bytes.count <= maximumDataLength else {
            throw .messageTooLarge(length: writer.bytes.count, maximum: maximumDataLength)
        }
        let header = IPCHeader(
            dataLength: UInt32(writer.bytes.count), flags: flags, operation: Self.operation.rawValue,
            context: context, registrationIndex: registrationIndex)
        return IPCRequestFrame(
            frame: IPCFrame(header: header, body: writer.bytes),
            passesErrorSocket: placeholder && errorReturnPath.isEmpty)
    }

    /// Decodes this request type from a frame (see `DecodedRequest.decode`).
    public static func decode(
        header: IPCHeader, body: [UInt8], connection: IPCConnectionState = .new
    ) throws(IPCDecodeError) -> Self {
        guard header.operation == operation.rawValue else {
            throw .operationMismatch(expected: operation.rawValue, found: header.operation)
        }
        let decoded = try DecodedRequest.decode(header: header, body: body, connection: connection)
        guard let message = decoded.request.message as? Self else {
            throw .operationMismatch(expected: operation.rawValue, found: header.operation)
        }
        return message
    }
}
