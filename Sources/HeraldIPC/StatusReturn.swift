/// Where the daemon sends a request's 4-byte status word (a big-endian `DNSServiceErrorType`).
public enum StatusReturn: Hashable, Sendable {
    /// On the connection itself, before any reply: the first request of a connection.
    case inBand
    /// On the socket the client passed with `SCM_RIGHTS` together with the body's last byte (the body began
    /// with an empty path string). The daemon writes the status there and closes it; a request that
    /// arrives without the socket is an error.
    case passedSocket
    /// On a socket the daemon must connect to at this path (old clients built with named error sockets).
    case namedSocket(path: String)
    /// Nowhere if it is `NoError`; otherwise as an `AsyncErrorReply` on the connection (`noErrorSocket` flag).
    case asyncErrorReply
    /// No status word: cancel answers nothing, get-property answers with its own raw reply.
    case none
}
