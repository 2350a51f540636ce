/// One line from the daemon: the answer to a request (`id` set) or an event after `subscribe` (`event` set).
public struct ControlReply: Codable, Hashable, Sendable {
    public var version: Int
    public var id: Int?
    public var ok: Bool
    public var error: ControlError?
    /// For event lines: `pending-request`, `decision`, `log`.
    public var event: String?

    public var apps: [ControlApp]?
    public var app: ControlApp?
    /// What `app-add` did: `added`, `updated: …`, `unchanged`; what a decision command did: `granted (was denied)`.
    public var change: String?
    /// Warnings about an accepted manifest (e.g. no usage description).
    public var warnings: [String]?
    public var requests: [ControlPendingRequest]?
    public var request: ControlPendingRequest?
    public var log: [ControlAuditLine]?
    public var status: ControlStatus?
    /// True when a list (`log`, `requests`, `apps`) was cut at ``ControlProtocol/pageLength``: more items follow
    /// on request.
    public var more: Bool?

    public init(id: Int?, ok: Bool = true, error: ControlError? = nil, event: String? = nil) {
        self.version = ControlProtocol.version
        self.id = id
        self.ok = ok
        self.error = error
        self.event = event
    }

    /// A failed answer.
    public static func failure(id: Int?, _ code: ControlError.Code, _ message: String, problems: [String]? = nil)
        -> ControlReply
    {
        ControlReply(id: id, ok: false, error: ControlError(code: code, message: message, problems: problems))
    }
}

/// Why a request failed, in a form both programs and people can use.
public struct ControlError: Codable, Hashable, Sendable, Error, CustomStringConvertible {
    public enum Code: String, Codable, Hashable, Sendable {
        /// The caller is not root or in the operator group.
        case notOperator = "not-operator"
        case unsupportedVersion = "unsupported-version"
        case malformedRequest = "malformed-request"
        case unknownApp = "unknown-app"
        /// The manifest does not validate; `problems` lists every problem.
        case invalidManifest = "invalid-manifest"
        /// Another app already claims one of the manifest's executables or units.
        case selectorConflict = "selector-conflict"
        /// The store could not be read or written; nothing was changed.
        case storeFailure = "store-failure"
    }

    public var code: Code
    public var message: String
    public var problems: [String]?

    public init(code: Code, message: String, problems: [String]? = nil) {
        self.code = code
        self.message = message
        self.problems = problems
    }

    public var description: String { message }
}
