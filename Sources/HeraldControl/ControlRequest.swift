/// What an operator asks the daemon (one line of the control protocol).
public struct ControlRequest: Codable, Hashable, Sendable {
    /// The commands of protocol version 1.
    public enum Command: String, Codable, Hashable, Sendable, CaseIterable {
        /// Register or replace a manifest (`manifest` holds the file's text, `fileName` its name).
        case appAdd = "app-add"
        case appRemove = "app-remove"
        case appList = "app-list"
        case appShow = "app-show"
        case grant
        case deny
        case reset
        /// The pending requests, most recent first, from `offset` on.
        case requests
        /// Audit lines after `after` (a sequence number), at most `limit`; the newest `limit` when `after` is nil.
        /// A reply that says `more` holds the first of them only: ask again after its last line for the rest.
        case log
        /// Interfaces, counts, apps and pending requests.
        case status
        /// Start receiving events for `topics` (`requests`, `decisions`, `log`).
        case subscribe
    }

    public var version: Int
    /// Chosen by the client; echoed in the reply.
    public var id: Int
    public var command: Command
    /// The app id, for commands about one app.
    public var app: String?
    /// A manifest's text, for `app-add`.
    public var manifest: String?
    /// The manifest file's name, which tells its format (`.json`, `.plist`), for `app-add`.
    public var fileName: String?
    public var after: Int64?
    public var limit: Int?
    public var topics: [String]?
    /// For `requests` and `app-list`: how many items of the list to skip (those of the earlier pages).
    public var offset: Int?

    public init(
        id: Int, command: Command, app: String? = nil, manifest: String? = nil, fileName: String? = nil,
        after: Int64? = nil, limit: Int? = nil, topics: [String]? = nil, offset: Int? = nil
    ) {
        self.version = ControlProtocol.version
        self.id = id
        self.command = command
        self.app = app
        self.manifest = manifest
        self.fileName = fileName
        self.after = after
        self.limit = limit
        self.topics = topics
        self.offset = offset
    }
}
