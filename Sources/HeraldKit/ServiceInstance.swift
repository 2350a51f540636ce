/// A DNS-SD service instance: its instance name (any UTF-8, not escaped), its type such as `_http._tcp`, and
/// its domain (`local.`).
public struct ServiceInstance: Hashable, Sendable, CustomStringConvertible {
    /// The instance name as people read it, for example `Living Room Printer`.
    public var name: String
    /// The service type, for example `_tictactoe._tcp` (a trailing dot is accepted).
    public var type: String
    /// The domain; `local.` for multicast DNS.
    public var domain: String

    /// The instance `name` of `type` in `domain`.
    public init(name: String, type: String, domain: String = "local.") {
        self.name = name
        self.type = type
        self.domain = domain
    }

    /// Two instances are the same service when type and domain match ignoring case and a trailing dot,
    /// and the names match ignoring ASCII case (RFC 6762 §16).
    public func isSameService(as other: ServiceInstance) -> Bool {
        Self.folded(name) == Self.folded(other.name) && Self.normalized(type) == Self.normalized(other.type)
            && Self.normalized(domain) == Self.normalized(other.domain)
    }

    public var description: String { "\(name).\(Self.normalized(type)).\(Self.normalized(domain))" }

    static func normalized(_ text: String) -> String {
        folded(text.hasSuffix(".") ? String(text.dropLast()) : text)
    }

    static func folded(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
