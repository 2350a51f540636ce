import HeraldIPC

/// A reply from the daemon with the client context of the request it answers, so that replies of the
/// operations sharing one connection can be told apart.
public struct ReceivedReply: Hashable, Sendable {
    /// The context the request was started with, echoed by the daemon.
    public var context: ClientContext
    public var reply: Reply

    public init(context: ClientContext, reply: Reply) {
        self.context = context
        self.reply = reply
    }
}
