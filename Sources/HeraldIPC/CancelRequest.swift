/// Stops the subordinate operation whose client context the header carries. Empty body, no status word.
public struct CancelRequest: IPCRequestMessage {
    public static let operation = RequestOperation.cancel

    public init() {}

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {}

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {}
}
