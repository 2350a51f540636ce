/// A request frame ready for the client to send.
public struct IPCRequestFrame: Hashable, Sendable {
    public var frame: IPCFrame

    /// True when the body began with an empty error-return path: the client sends every byte but the last
    /// with an ordinary write, then the last byte with `sendmsg` carrying one end of a socket pair in
    /// `SCM_RIGHTS`, and reads the 4-byte status from the other end.
    public var passesErrorSocket: Bool

    public init(frame: IPCFrame, passesErrorSocket: Bool) {
        self.frame = frame
        self.passesErrorSocket = passesErrorSocket
    }

    public var header: IPCHeader { frame.header }

    /// Header and body.
    public var bytes: [UInt8] { frame.encoded }
}
