/// The `ipc_flags` word of a header.
public struct IPCFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The client wants no asynchronous replies for this request, async errors included (`IPC_FLAGS_NOREPLY`);
    /// the client library sets it on registrations made without a callback.
    public static let noReply = IPCFlags(rawValue: 1 << 0)
    /// Type-length-value items follow the request's standard fields (`IPC_FLAGS_TRAILING_TLVS`).
    public static let trailingTLVs = IPCFlags(rawValue: 1 << 1)
    /// No error socket and no path placeholder: the status comes back only if it is an error, as an
    /// async-error reply (`IPC_FLAGS_NOERRSD`).
    public static let noErrorSocket = IPCFlags(rawValue: 1 << 2)
}
