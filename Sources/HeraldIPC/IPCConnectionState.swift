/// Where a request stands on its connection, which decides whether its body starts with the
/// error-return path placeholder.
public enum IPCConnectionState: Hashable, Sendable {
    /// No operation runs on the connection yet: this request is its first (primary) request.
    case new
    /// An operation already runs on the connection (a `connection` request, or a registration that started),
    /// so this request is a subordinate operation of a shared connection or a record operation.
    case established

    /// Whether a request with this operation and these flags begins with the error-return path string.
    ///
    /// mDNSResponder's `read_msg` reads that string first exactly when the connection is established, the
    /// request has no `noErrorSocket` flag and is not a cancel. The client library sends an empty string
    /// there and passes one end of a socket pair with `SCM_RIGHTS` alongside the body's last byte.
    public func bodyStartsWithErrorReturnPath(operation: UInt32, flags: IPCFlags) -> Bool {
        self == .established && !flags.contains(.noErrorSocket) && operation != RequestOperation.cancel.rawValue
    }
}
