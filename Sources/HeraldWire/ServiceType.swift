/// A DNS-SD service type: an application protocol name and a transport (`_http._tcp`) in a domain,
/// optionally narrowed to a subtype (`_printer._sub._http._tcp`) (RFC 6763 §7, §7.1).
///
/// Equality and hashing follow the full name, so they ignore ASCII case (`_HTTP._TCP` equals
/// `_http._tcp`, RFC 6335 §5.1, RFC 6762 §16); the original case is kept for display.
public struct ServiceType: Hashable, Sendable, CustomStringConvertible {
    /// The transport label of a service type (RFC 6763 §7): `_tcp` for protocols that run over TCP,
    /// `_udp` for all others.
    public enum Transport: String, Hashable, Sendable, CaseIterable {
        case tcp = "_tcp"
        case udp = "_udp"

        /// The transport a label names, ignoring ASCII case, or nil when it is neither `_tcp` nor `_udp`.
        public init?<Label: Collection>(label: Label) where Label.Element == UInt8 {
            let lowered = label.map(ASCIICase.lower)
            guard let match = Transport.allCases.first(where: { lowered.elementsEqual($0.rawValue.utf8) })
            else { return nil }
            self = match
        }
    }

    /// The domain used when none is given: `local.` (RFC 6762 §3).
    public static let defaultDomain: DNSName = "local."
    /// RFC 6335 §5.1: a service name registered with IANA has at most 15 characters. Longer names are
    /// accepted all the same (as Avahi and mDNSResponder accept them), with a warning
    /// (``registrationWarnings(forServiceName:)``).
    public static let maxRegisteredServiceNameLength = 15
    /// The longest service name accepted: the label, underscore included, holds at most 63 bytes.
    public static let maxServiceNameLength = DNSName.maxLabelLength - 1
    /// The service type enumeration name for `local.` (RFC 6763 §9); browsing it lists the types in use.
    public static let serviceEnumeration: DNSName = "_services._dns-sd._udp.local."

    /// The label that separates a subtype from its parent type (RFC 6763 §7.1).
    static let subtypeMarker = Array("_sub".utf8)
    /// The labels in front of a domain that make its service type enumeration name (RFC 6763 §9).
    static let enumerationLabels = [Array("_services".utf8), Array("_dns-sd".utf8), Array("_udp".utf8)]

    /// True for `_dns-sd._udp`: not a service but DNS-SD's own names, under which the service types in use
    /// (RFC 6763 §9) and the browsing domains (§11) are listed.
    public var isDNSSDItself: Bool { transport == .udp && name.lowercased() == "dns-sd" }

    /// The service name without its leading underscore, as written (`http`).
    public let name: String
    /// The transport: `_tcp` or `_udp`.
    public let transport: Transport
    /// The subtype label's raw bytes (`_printer`), or nil for the plain type.
    public let subtype: [UInt8]?
    /// The domain the type lives in (`local.` unless given).
    public let domain: DNSName
    /// The whole name: `_http._tcp.local.`, or `_printer._sub._http._tcp.local.` with a subtype.
    public let fullName: DNSName

    /// Builds a type from its parts, validating the service name (``validate(serviceName:)``) and the subtype label
    /// (1–63 bytes, RFC 6763 §7.1). `name` is given without its underscore (a leading one is tolerated);
    /// a root `domain` means `local.`.
    public init(
        name: String, transport: Transport, subtype: [UInt8]? = nil, domain: DNSName = ServiceType.defaultDomain
    ) throws(ServiceNameError) {
        let bare = name.hasPrefix("_") ? String(name.dropFirst()) : name
        try Self.validate(serviceName: bare)
        try self.init(validatedName: bare, transport: transport, subtype: subtype, domain: domain)
    }

    /// Parses a type as people type it: `_http._tcp`, `_http._tcp.`, `_http._tcp.local.`,
    /// `_printer._sub._http._tcp.example.com`. Presentation escapes are allowed; no domain means `local.`.
    public init(_ text: String) throws(ServiceNameError) {
        let name: DNSName
        do {
            name = try DNSName(text)
        } catch {
            throw .invalidName(text, error)
        }
        try self.init(labels: name.labels, text: text)
    }

    /// Splits a full type name (`_http._tcp.local.`, `_printer._sub._http._tcp.local.`) into its parts
    /// and validates them (RFC 6763 §7, §7.1). A name that stops after the transport means `local.`.
    public init(fullName: DNSName) throws(ServiceNameError) {
        try self.init(labels: fullName.labels, text: fullName.description)
    }

    /// The type without its subtype, as a name (`_http._tcp.local.`).
    public var baseTypeName: DNSName {
        subtype == nil ? fullName : fullName.suffix(labelCount: fullName.labelCount - 2)
    }

    /// The type without its subtype.
    public var baseType: ServiceType {
        subtype == nil
            ? self
            : ServiceType(
                validatedName: name, transport: transport, subtype: nil, domain: domain,
                fullName: baseTypeName)
    }

    /// True when this type is narrowed to a subtype.
    public var hasSubtype: Bool { subtype != nil }

    /// The same type narrowed to `subtype` (raw label bytes, 1–63 of them, RFC 6763 §7.1), or to the
    /// plain type for nil.
    public func withSubtype(_ subtype: [UInt8]?) throws(ServiceNameError) -> ServiceType {
        try ServiceType(validatedName: name, transport: transport, subtype: subtype, domain: domain)
    }

    /// The same type narrowed to a subtype given as text, taken literally as the label's UTF-8 bytes
    /// (no escapes): `withSubtype("_printer")`.
    public func withSubtype(_ subtype: String) throws(ServiceNameError) -> ServiceType {
        try withSubtype(Array(subtype.utf8))
    }

    /// The same type (and subtype) in another domain; the root means `local.`.
    public func inDomain(_ domain: DNSName) throws(ServiceNameError) -> ServiceType {
        try ServiceType(validatedName: name, transport: transport, subtype: subtype, domain: domain)
    }

    /// `_http._tcp` or `_printer._sub._http._tcp`, followed by the domain unless it is `local.`; the
    /// subtype is escaped as in presentation form, so the text parses back with ``init(_:)``.
    public var description: String {
        var text = ""
        if let subtype {
            text += DNSName.presentation(ofLabel: subtype) + "._sub."
        }
        text += "_" + name + "." + transport.rawValue
        if domain != Self.defaultDomain {
            text += "." + domain.description
        }
        return text
    }

    /// The plain type as the dnssd API's replies carry it, apart from the domain: `_http._tcp.` (no subtype, no
    /// domain; the domain goes in a field of its own, ``domain``).
    public var dnssdRegtype: String { "_" + name + "." + transport.rawValue + "." }

    /// The service type enumeration name of `domain`: `_services._dns-sd._udp.<domain>` (RFC 6763 §9).
    public static func serviceEnumeration(in domain: DNSName) throws(ServiceNameError) -> DNSName {
        do {
            return try DNSName(labels: enumerationLabels).appending(domain)
        } catch {
            throw .invalidName("_services._dns-sd._udp." + domain.description, error)
        }
    }

    /// True when `name` is a service type enumeration name, `_services._dns-sd._udp.<domain>` in any
    /// domain, compared ignoring ASCII case (RFC 6763 §9).
    public static func isServiceEnumeration(_ name: DNSName) -> Bool {
        let labels = name.labels
        guard labels.count >= enumerationLabels.count else { return false }
        return zip(labels, enumerationLabels).allSatisfy { equalFolded($0, $1) }
    }

    /// Checks a service name, given without its underscore, as Avahi and mDNSResponder check what they accept:
    /// 1–62 bytes (the label with its underscore holds at most 63) of ASCII letters, digits, hyphens and
    /// underscores. RFC 6335 §5.1's stricter rules for names registered with IANA (at most 15 characters, a
    /// letter, no hyphen at either end or doubled, no underscore) are not enforced here: real apps break them
    /// (`_barrierServerZeroconf._tcp`), and ``registrationWarnings(forServiceName:)`` says where.
    public static func validate(serviceName name: String) throws(ServiceNameError) {
        if name.isEmpty { throw .emptyServiceName }
        if let bad = name.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_")) }) {
            throw .invalidCharacter(
                DNSName.presentation(ofLabel: Array(name.utf8)),
                character: DNSName.presentation(ofLabel: Array(String(bad).utf8)))
        }
        // Only ASCII is left, so characters and bytes are the same thing from here on.
        if name.utf8.count > maxServiceNameLength { throw .serviceNameTooLong(name) }
    }

    /// Where an accepted service name (without its underscore) breaks RFC 6335 §5.1's rules for names
    /// registered with IANA; empty when it follows them all. These are warnings, never reasons to refuse.
    public static func registrationWarnings(forServiceName name: String) -> [ServiceNameWarning] {
        var warnings: [ServiceNameWarning] = []
        if name.count > maxRegisteredServiceNameLength { warnings.append(.longerThanRegistrable(name)) }
        if name.contains("_") { warnings.append(.underscore(name)) }
        if !name.isEmpty, !name.contains(where: \.isLetter) { warnings.append(.noLetter(name)) }
        if name.hasPrefix("-") || name.hasSuffix("-") { warnings.append(.hyphenAtEnd(name)) }
        if name.contains("--") { warnings.append(.consecutiveHyphens(name)) }
        return warnings
    }

    /// Where this type's service name breaks RFC 6335 §5.1's registration rules (see
    /// ``registrationWarnings(forServiceName:)``).
    public var registrationWarnings: [ServiceNameWarning] { Self.registrationWarnings(forServiceName: name) }

    public static func == (lhs: ServiceType, rhs: ServiceType) -> Bool { lhs.fullName == rhs.fullName }

    public func hash(into hasher: inout Hasher) { hasher.combine(fullName) }

    // MARK: - Building and parsing

    private init(
        validatedName name: String, transport: Transport, subtype: [UInt8]?, domain: DNSName,
        fullName: DNSName
    ) {
        self.name = name
        self.transport = transport
        self.subtype = subtype
        self.domain = domain
        self.fullName = fullName
    }

    /// Builds a type whose service name is already valid, checking the subtype and the total length.
    private init(validatedName name: String, transport: Transport, subtype: [UInt8]?, domain: DNSName)
        throws(ServiceNameError)
    {
        let domain = domain.isRoot ? Self.defaultDomain : domain
        var labels: [[UInt8]] = []
        if let subtype {
            if subtype.isEmpty { throw .emptySubtype }
            if subtype.count > DNSName.maxLabelLength {
                throw .subtypeTooLong(DNSName.presentation(ofLabel: subtype), length: subtype.count)
            }
            labels += [subtype, Self.subtypeMarker]
        }
        labels += [Array(("_" + name).utf8), Array(transport.rawValue.utf8)]
        let fullName: DNSName
        do {
            fullName = try DNSName(labels: labels).appending(domain)
        } catch {
            let text = labels.map { DNSName.presentation(ofLabel: $0) }.joined(separator: ".")
            throw .invalidName(text + "." + domain.description, error)
        }
        self.init(validatedName: name, transport: transport, subtype: subtype, domain: domain, fullName: fullName)
    }

    /// Parses `[subtype, _sub,] _name, _tcp|_udp, domain...`; `text` is what the user wrote, for errors.
    private init(labels: [[UInt8]], text: String) throws(ServiceNameError) {
        var rest = labels[...]
        var subtype: [UInt8]?
        if rest.count >= 2, Self.equalFolded(rest[rest.startIndex + 1], Self.subtypeMarker) {
            subtype = rest.first
            rest = rest.dropFirst(2)
        }
        if rest.count >= 2, Self.equalFolded(rest[rest.startIndex], Self.enumerationLabels[0]),
            Self.equalFolded(rest[rest.startIndex + 1], Self.enumerationLabels[1])
        {
            throw .serviceEnumerationName(text)
        }
        guard let serviceLabel = rest.first else { throw .notAServiceType(text) }
        guard rest.count >= 2 else {
            if serviceLabel.first == UInt8(ascii: "_") {
                try Self.validate(serviceLabel: serviceLabel)
                throw .missingTransport(text)
            }
            throw .notAServiceType(text)
        }
        if subtype == nil, Self.equalFolded(serviceLabel, Self.subtypeMarker),
            Transport(label: rest[rest.startIndex + 1]) == nil
        {
            throw .missingSubtype(text)
        }
        try self.init(
            serviceLabel: serviceLabel, transportLabel: rest[rest.startIndex + 1],
            domainLabels: rest.dropFirst(2), subtype: subtype)
    }

    /// Builds a type from its service label (with underscore), transport label and domain labels, as
    /// they stand in a name; ``ServiceInstanceName`` uses it to read the type that follows an instance.
    init(serviceLabel: [UInt8], transportLabel: [UInt8], domainLabels: ArraySlice<[UInt8]>, subtype: [UInt8]?)
        throws(ServiceNameError)
    {
        let name = try Self.validate(serviceLabel: serviceLabel)
        guard let transport = Transport(label: transportLabel) else {
            throw .invalidTransport(DNSName.presentation(ofLabel: transportLabel))
        }
        let domain: DNSName
        do {
            domain = try DNSName(labels: domainLabels)
        } catch {
            throw .invalidName(domainLabels.map { DNSName.presentation(ofLabel: $0) }.joined(separator: "."), error)
        }
        try self.init(validatedName: name, transport: transport, subtype: subtype, domain: domain)
    }

    /// Checks a service label as it stands in a name (`_http`) and returns the name without underscore.
    @discardableResult
    static func validate(serviceLabel label: [UInt8]) throws(ServiceNameError) -> String {
        guard label.first == UInt8(ascii: "_") else {
            throw .missingUnderscore(DNSName.presentation(ofLabel: label))
        }
        let bytes = label.dropFirst()
        guard let name = String(validating: bytes, as: UTF8.self) else {
            // Not UTF-8, so certainly not letters, digits and hyphens: name the first byte that is not.
            let bad = bytes.first { $0 >= 0x80 } ?? 0x80
            throw .invalidCharacter(DNSName.presentation(ofLabel: bytes), character: "\\\(bad)")
        }
        try validate(serviceName: name)
        return name
    }

    /// Byte-wise equality ignoring ASCII case.
    static func equalFolded(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in ASCIICase.equalFolded(x, y) } }
    }
}
