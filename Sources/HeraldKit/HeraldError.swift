import HeraldClient
import HeraldIPC

/// The dnssd error codes of `dns_sd.h` (`kDNSServiceErr_*`), such as ``DNSServiceError/noAuth``.
public typealias DNSServiceError = HeraldIPC.DNSServiceError

/// Why an operation failed.
public enum HeraldError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The daemon refused or ended the operation with this code: `noAuth` for an app that may never do
    /// this without a new manifest, `nameConflict` for a registration whose name is taken, …
    case daemon(DNSServiceError)
    /// Talking to the daemon failed: it is not running, it closed the connection, it sent garbage.
    case connection(DNSSDClientError)
    /// The request cannot be sent as given (a name with a NUL, a TXT record too long, a bad key).
    case invalidRequest(String)
    /// No answer came in time.
    case timedOut
    /// No answer came in time because the operation waited for permission all along.
    case notPermitted(reason: String)

    public var description: String {
        switch self {
        case .daemon(let code): return "the daemon answered \(code)"
        case .connection(let error): return error.description
        case .invalidRequest(let why): return "invalid request: \(why)"
        case .timedOut: return "no answer in time"
        case .notPermitted(let reason): return "not permitted: \(reason)"
        }
    }
}
