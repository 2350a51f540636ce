/// A request as the daemon sees it: the header, the typed request, where its status goes, and any
/// trailing TLVs.
public struct DecodedRequest: Hashable, Sendable {
    public var header: IPCHeader
    public var request: Request
    /// Where the daemon sends the request's 4-byte status.
    public var statusReturn: StatusReturn
    /// Well-formed TLV items after the standard fields, when the header has `trailingTLVs`.
    public var trailingTLVs: [IPCTLV]
    /// Bytes after the standard fields that were not read as TLVs (ignored, as mDNSResponder ignores them).
    public var ignoredTrailingByteCount: Int

    public init(
        header: IPCHeader, request: Request, statusReturn: StatusReturn, trailingTLVs: [IPCTLV] = [],
        ignoredTrailingByteCount: Int = 0
    ) {
        self.header = header
        self.request = request
        self.statusReturn = statusReturn
        self.trailingTLVs = trailingTLVs
        self.ignoredTrailingByteCount = ignoredTrailingByteCount
    }

    /// Decodes a request frame.
    ///
    /// The body must have exactly the header's `datalen`. Port mapping is refused as unsupported; any other
    /// operation code that is not a request is unknown. On an `.established` connection the body begins with
    /// the error-return path (unless the header has `noErrorSocket`, or the request is a cancel); record
    /// operations and cancel are refused on a `.new` connection.
    public static func decode(
        header: IPCHeader, body: [UInt8], connection: IPCConnectionState = .new
    ) throws(IPCDecodeError) -> DecodedRequest {
        guard body.count == Int(header.dataLength) else {
            throw .bodyLengthMismatch(declared: header.dataLength, actual: body.count)
        }
        guard let operation = header.requestOperation else { throw .unknownOperation(header.operation) }
        if operation == .portMapping { throw .unsupportedRequest(.portMapping) }
        if connection == .new && operation.requiresEstablishedConnection {
            throw .requiresEstablishedConnection(operation)
        }

        var reader = IPCBodyReader(body)
        var status: StatusReturn
        if connection.bodyStartsWithErrorReturnPath(operation: header.operation, flags: header.flags) {
            let path = try reader.readString(
                .errorReturnPath, maximumLength: IPCConstants.maximumErrorReturnPathLength)
            status = path.isEmpty ? .passedSocket : .namedSocket(path: path)
        } else if header.flags.contains(.noErrorSocket) {
            status = .asyncErrorReply
        } else {
            status = .inBand
        }
        if operation == .cancel || operation == .getProperty { status = .none }

        let request = try Request.read(operation, from: &reader, header: header)

        var tlvs: [IPCTLV] = []
        var ignored = reader.remainingCount
        if header.flags.contains(.trailingTLVs) {
            let rest = reader.readRemaining()
            tlvs = IPCTLV.parseAll(rest)
            ignored = rest.count - tlvs.reduce(0) { $0 + 4 + $1.value.count }
        }
        return DecodedRequest(
            header: header, request: request, statusReturn: status, trailingTLVs: tlvs,
            ignoredTrailingByteCount: ignored)
    }
}
