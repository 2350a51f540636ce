import HeraldIPC
import HeraldWire

/// The app socket's refused requests, so that an operator can see why an app fails and the app can ask why.
///
/// Every refusal (BadParam, Unsupported, NoAuth, …) is logged with what was asked and why, once per client and
/// reason: a client that repeats the same refused request in a loop adds nothing after its first line. Over all
/// clients at most ``linesPerWindow`` lines are written per ``windowMilliseconds``; the first line after a full
/// window says how many were left out. What a process is told when it asks why is kept apart
/// (``RefusalExplanations``).
final class RefusalLog {
    static let linesPerWindow = 20
    static let windowMilliseconds: Int64 = 10_000
    /// Reasons remembered per client (the first of each is logged); past this a client's refusals are not logged.
    static let reasonsPerClient = 64

    /// Why the request being handled was refused, set by the check that refused it.
    var reason: String?
    /// Why the request being handled was parked (accepted, waiting for a decision), if it was.
    var parked: String?

    private var reasonsLogged: [Int: Set<String>] = [:]
    private var windowStart: Int64?
    private var linesInWindow = 0
    private var leftOut = 0

    /// Notes a refusal of `client` (connection `clientID`, process `pid`): returns the lines to log at notice
    /// level, none when the client was refused for the same reason before or the window's lines are spent.
    /// `request` says what was asked, `reason` why it was refused.
    func refused(
        clientID: Int, pid: Int32, status: DNSServiceError, request: String, reason: String,
        now: Int64
    ) -> [String] {
        var lines: [String] = []
        var reasons = reasonsLogged[clientID, default: []]
        let key = "\(status.rawValue) \(reason)"
        guard reasons.count < Self.reasonsPerClient, reasons.insert(key).inserted else { return lines }
        reasonsLogged[clientID] = reasons
        if windowStart.map({ now - $0 >= Self.windowMilliseconds }) ?? true {
            if leftOut > 0 {
                lines.append(
                    "app socket: \(leftOut) more refusals were not logged (at most \(Self.linesPerWindow) lines every \(Self.windowMilliseconds / 1000) s)"
                )
            }
            windowStart = now
            linesInWindow = 0
            leftOut = 0
        }
        guard linesInWindow < Self.linesPerWindow else {
            leftOut += 1
            return lines
        }
        linesInWindow += 1
        let named = status.name.map { "\($0) (\(status.rawValue))" } ?? "\(status.rawValue)"
        lines.append("app socket: refused \(request) for client \(clientID) (pid \(pid)): \(named): \(reason)")
        return lines
    }

    /// Forgets a client that disconnected (its process's newest refusal stays, for a later "why").
    func forget(clientID: Int) { reasonsLogged[clientID] = nil }

    /// The explanation of a refusal that is not about permission, in the explanation's `reason: text` form.
    static func explanation(_ status: DNSServiceError, _ reason: String) -> String {
        let code =
            switch status {
            case .badParam: "bad-param"
            case .unsupported: "unsupported"
            case .badReference: "bad-reference"
            case .noMemory: "no-memory"
            case .timeout: "timeout"
            default: "error"
            }
        return "\(code): \(reason) (\(status.name ?? "error") \(status.rawValue), not a permission decision)"
    }

    /// Text a client sent, fit for a log line: control characters escaped, at most 200 characters.
    package static func shown(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars.prefix(200) {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0..<0x20, 0x7F, 0x80...0x9F: out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + (text.unicodeScalars.count > 200 ? "…\"" : "\"")
    }
}

/// Why a request is refused, in words for the log and the explanation.
package struct RefusalText: Error {
    package let text: String
    package init(_ text: String) { self.text = text }
}

extension Request {
    /// What the request asks for, for log lines: `browse "_http._tcp" in "local."`.
    package var summary: String {
        let shown = RefusalLog.shown
        switch self {
        case .connection: return "connection"
        case .registerRecord(let r): return "register-record \(shown(r.fullname)) type \(r.rrtype)"
        case .removeRecord(let r): return "remove-record \(r.recordIndex)"
        case .enumeration: return "enumerate-domains"
        case .registerService(let r):
            return "register \(shown(r.name)) \(shown(r.regtype)) in \(shown(r.domain)) port \(r.port)"
        case .browse(let r): return "browse \(shown(r.regtype)) in \(shown(r.domain))"
        case .resolve(let r): return "resolve \(shown(r.name)) \(shown(r.regtype)) in \(shown(r.domain))"
        case .query(let r): return "query \(shown(r.name)) type \(r.rrtype) class \(r.rrclass)"
        case .reconfirm(let r): return "reconfirm \(shown(r.fullname)) type \(r.rrtype)"
        case .addRecord(let r): return "add-record type \(r.rrtype)"
        case .updateRecord: return "update-record"
        case .setDomain: return "set-default-domain"
        case .getProperty(let r): return "get-property \(shown(r.name))"
        case .addrInfo(let r): return "get-addr-info \(shown(r.hostname))"
        case .cancel: return "cancel"
        }
    }
}
