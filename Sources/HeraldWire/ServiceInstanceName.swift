/// A DNS-SD service instance name: `<Instance>.<_name._tcp|_udp>.<Domain>` (RFC 6763 §4.1).
///
/// The instance is one label of free UTF-8 text — spaces, dots and backslashes included — so
/// `Living Room.Speaker._airplay._tcp.local.` has four labels, not five; in presentation form its dot is
/// written `\.` (RFC 6763 §4.3). Equality and hashing follow the full name (ASCII case ignored).
public struct ServiceInstanceName: Hashable, Sendable, CustomStringConvertible {
    /// RFC 6763 §7.2: the instance label holds at most 63 bytes of UTF-8.
    public static let maxInstanceLength = DNSName.maxLabelLength

    /// The instance name, exactly as in the label (`Living Room.Speaker`).
    public let instance: String
    /// The service type, never with a subtype; its domain is the instance's domain.
    public let type: ServiceType
    /// The whole name: the instance label, then the type, then the domain.
    public let fullName: DNSName

    /// The domain the instance lives in (the same as `type.domain`).
    public var domain: DNSName { type.domain }

    /// Builds an instance name, checking the instance text (RFC 6763 §4.1.1: 1–63 bytes of UTF-8, no
    /// control characters). A `domain` moves `type` into that domain; nil keeps the type's own.
    public init(instance: String, type: ServiceType, domain: DNSName? = nil) throws(ServiceNameError) {
        try Self.validate(instance: instance)
        if type.hasSubtype { throw .instanceTypeHasSubtype(type.description) }
        var type = type
        if let domain { type = try type.inDomain(domain) }
        let label = Array(instance.utf8)
        do {
            fullName = try type.fullName.prepending(label: label)
        } catch {
            throw .invalidName(DNSName.presentation(ofLabel: label) + "." + type.fullName.description, error)
        }
        self.instance = instance
        self.type = type
    }

    /// Splits a full name such as `Café Printer._ipp._tcp.local.` into instance (first label), type
    /// (next two) and domain (the rest, `local.` when there is none), validating each (RFC 6763 §4.1).
    public init(fullName: DNSName) throws(ServiceNameError) {
        let labels = fullName.labels
        guard labels.count >= 3 else { throw .incompleteInstanceName(fullName.description) }
        guard let instance = String(validating: labels[0], as: UTF8.self) else {
            throw .instanceNotUTF8(DNSName.presentation(ofLabel: labels[0]))
        }
        let type = try ServiceType(
            serviceLabel: labels[1], transportLabel: labels[2],
            domainLabels: labels[3...], subtype: nil)
        try self.init(instance: instance, type: type)
    }

    /// Parses the escaped presentation form, as ``description`` writes it: `My\.Printer._ipp._tcp.local.`
    /// has the instance `My.Printer` (RFC 6763 §4.3). The domain may be left out for `local.`.
    public init(parsing presentation: String) throws(ServiceNameError) {
        let name: DNSName
        do {
            name = try DNSName(presentation)
        } catch {
            throw .invalidName(presentation, error)
        }
        if let suggestion = Self.unescapedDotSuggestion(name.labels) {
            throw .unescapedDot(presentation, suggestion: suggestion)
        }
        try self.init(fullName: name)
    }

    /// The full name in presentation form, dots and backslashes in the instance escaped:
    /// `Living Room\.Speaker._airplay._tcp.local.`.
    public var description: String { fullName.description }

    /// The candidate name for automatic renaming after a conflict (RFC 6762 §9), Bonjour style: see
    /// ``renamed(_:attempt:)``. The instance is shortened further if the full name would pass 255 bytes.
    public func renamed(attempt: Int) throws(ServiceNameError) -> ServiceInstanceName {
        // 1 length byte + label + the type's wire length (root included) must stay within 255.
        let room = min(Self.maxInstanceLength, DNSName.maxWireLength - 1 - type.fullName.wireLength)
        let label =
            Self.renamed(instance, attempt: attempt, maxBytes: room)
            ?? Self.renamed(instance, attempt: attempt)  // does not fit: let the initializer say why
        return try ServiceInstanceName(instance: label, type: type)
    }

    /// Bonjour's rename rule for instance names: attempt 2 gives `Name (2)`, attempt 3 `Name (3)`; an
    /// existing ` (N)` suffix is replaced rather than stacked, and the base is shortened at a character
    /// boundary so the result fits in 63 bytes. Attempts below 2 give the base name without a suffix.
    public static func renamed(_ instance: String, attempt: Int) -> String {
        renamed(instance, attempt: attempt, maxBytes: maxInstanceLength) ?? " (\(attempt))"
    }

    /// The host-name counterpart (RFC 6762 §9): `host` becomes `host-2`, `host-3`; a trailing
    /// `-<digits>` is taken as an earlier rename counter and replaced. Fits the result in 63 bytes.
    public static func renamedHost(_ label: String, attempt: Int) -> String {
        let base = stripCounter(from: label, prefix: [UInt8(ascii: "-")], suffix: [])
        guard attempt >= 2 else { return truncated(base, toUTF8Count: DNSName.maxLabelLength, trimming: "-") }
        let counter = "-\(attempt)"
        let room = max(0, DNSName.maxLabelLength - counter.utf8.count)
        return truncated(base, toUTF8Count: room, trimming: "-") + counter
    }

    /// Checks instance text against RFC 6763 §4.1.1: 1–63 bytes of UTF-8 and no ASCII control
    /// characters (bytes 0x00–0x1F and 0x7F); anything else, dots and backslashes included, is allowed.
    public static func validate(instance: String) throws(ServiceNameError) {
        let length = instance.utf8.count
        if length == 0 { throw .emptyInstance }
        let shown = DNSName.presentation(ofLabel: instance.utf8)
        if length > maxInstanceLength { throw .instanceTooLong(shown, length: length) }
        if instance.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { throw .instanceControlCharacter(shown) }
    }

    public static func == (lhs: ServiceInstanceName, rhs: ServiceInstanceName) -> Bool {
        lhs.fullName == rhs.fullName
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(fullName) }

    // MARK: - Helpers

    /// The rename candidate fitted into `maxBytes`, or nil when not even one character of the base
    /// would fit next to the counter.
    static func renamed(_ instance: String, attempt: Int, maxBytes: Int) -> String? {
        let base = stripCounter(from: instance, prefix: Array(" (".utf8), suffix: [UInt8(ascii: ")")])
        guard attempt >= 2 else { return truncated(base, toUTF8Count: maxBytes, trimming: " ") }
        let counter = " (\(attempt))"
        let room = maxBytes - counter.utf8.count
        guard room >= 0 else { return nil }
        let kept = truncated(base, toUTF8Count: room, trimming: " ")
        if kept.isEmpty && !base.isEmpty { return nil }
        return kept + counter
    }

    /// `text` without a trailing rename counter `<prefix><digits><suffix>` (such as ` (2)` or `-2`), when
    /// it has one and something precedes it; otherwise `text` unchanged.
    static func stripCounter(from text: String, prefix: [UInt8], suffix: [UInt8]) -> String {
        let bytes = Array(text.utf8)
        guard bytes.count > prefix.count + suffix.count, bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return text }
        var index = bytes.count - suffix.count
        while index > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index - 1]) { index -= 1 }
        let digits = bytes.count - suffix.count - index
        guard digits > 0, index - prefix.count > 0, bytes[(index - prefix.count)..<index].elementsEqual(prefix)
        else { return text }
        // The cut is just before an ASCII byte, so it falls between two characters.
        return String(decoding: bytes[..<(index - prefix.count)], as: UTF8.self)
    }

    /// `text` cut to at most `limit` bytes of UTF-8 without splitting a character (a grapheme cluster, or
    /// failing that a Unicode scalar); when something was cut, trailing `trimming` characters go too.
    static func truncated(_ text: String, toUTF8Count limit: Int, trimming: Character) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = Substring(text)
        while kept.utf8.count > limit { kept.removeLast() }
        if kept.isEmpty {
            // A single cluster (a long emoji sequence, say) is bigger than the room: keep whole scalars.
            var scalars = String.UnicodeScalarView()
            var count = 0
            for scalar in text.unicodeScalars {
                count += UTF8.width(scalar)
                if count > limit { break }
                scalars.append(scalar)
            }
            kept = Substring(String(scalars))
        }
        let trimmed = kept.reversed().drop(while: { $0 == trimming }).count
        return trimmed == 0 ? String(kept) : String(kept.prefix(trimmed))
    }

    /// For `Living Room.Speaker._ipp._tcp.local.` parsed with its dot unescaped: the spelling with the
    /// instance's dots escaped, when the labels read that way and not as written.
    static func unescapedDotSuggestion(_ labels: [[UInt8]]) -> String? {
        guard labels.count >= 4, labels[1].first != UInt8(ascii: "_"),
            ServiceType.Transport(label: labels[2]) == nil,
            let transport = (3..<labels.count).first(where: {
                ServiceType.Transport(label: labels[$0]) != nil && labels[$0 - 1].first == UInt8(ascii: "_")
            })
        else { return nil }
        let instance = Array(labels[..<(transport - 1)].joined(separator: [UInt8(ascii: ".")]))
        let rest = labels[(transport - 1)...].map { DNSName.presentation(ofLabel: $0) }
        return ([DNSName.presentation(ofLabel: instance)] + rest).joined(separator: ".") + "."
    }
}
