import HeraldClient
import HeraldIPC

/// What the reader thread of one daemon operation reports, in order.
enum OperationEvent: Sendable, Hashable {
    /// The daemon answered the request with `status`; `replies` are those that had already arrived with it
    /// (a parked operation's NoAuth reply follows its status at once, so it usually comes here).
    case started(status: DNSServiceError, replies: [Reply])
    /// Replies that arrived together: a batch ends at the last reply already received, and a reply flagged
    /// `moreComing` says that more of the same batch follow.
    case replies([Reply])
    /// Why the daemon answered NoAuth, with the fix (Herald's `HeraldPermissionExplanation` property), sent just
    /// before the event that carries the NoAuth.
    case explained(String)
    /// The connection failed or could not be opened; nothing follows.
    case failed(DNSSDClientError)
}
