import HeraldWire

/// Which address family a static service is published on (Avahi's `protocol` attribute).
package enum StaticServiceProtocol: String, Hashable, Sendable, CaseIterable {
    case any
    case ipv4
    case ipv6
}

/// A service read from a static definition file (Avahi `.service` XML or systemd-resolved `.dnssd`),
/// with wildcards and specifiers already replaced.
package struct StaticService: Hashable, Sendable {
    /// The instance name, e.g. `myhost SSH` (at most 63 bytes of UTF-8).
    package var name: String
    /// The service type, in its domain (`local.` unless the file gives another).
    package var type: ServiceType
    /// Subtype labels, e.g. `_printer`.
    package var subtypes: [String]
    /// The host the service runs on; nil for this host.
    package var host: DNSName?
    package var port: UInt16
    /// SRV priority, where the file gives one (systemd `Priority=`).
    package var priority: UInt16?
    /// SRV weight, where the file gives one (systemd `Weight=`).
    package var weight: UInt16?
    /// The TXT record sets. Avahi files give exactly one; systemd files give one per `TxtText=`/`TxtData=`
    /// line (systemd publishes one TXT resource record per line). Never empty.
    package var txtRecords: [TXTRecord]
    package var `protocol`: StaticServiceProtocol
    /// Where the service was defined.
    package var file: String

    package init(
        name: String, type: ServiceType, subtypes: [String] = [], host: DNSName? = nil, port: UInt16,
        priority: UInt16? = nil, weight: UInt16? = nil, txtRecords: [TXTRecord] = [.empty],
        protocol: StaticServiceProtocol = .any, file: String = ""
    ) {
        self.name = name
        self.type = type
        self.subtypes = subtypes
        self.host = host
        self.port = port
        self.priority = priority
        self.weight = weight
        self.txtRecords = txtRecords.isEmpty ? [.empty] : txtRecords
        self.protocol = `protocol`
        self.file = file
    }

    /// The domain the service is published in.
    package var domain: DNSName { type.domain }

    /// The (first) TXT record; see ``txtRecords``.
    package var txt: TXTRecord { txtRecords.first ?? .empty }
}

/// One thing wrong with a service definition file.
package struct ServiceFileProblem: Hashable, Sendable, CustomStringConvertible {
    package enum Severity: String, Hashable, Sendable {
        /// The service (for Avahi: the whole service group) is not published.
        case error
        /// Ignored (an unknown key, element or attribute); the rest of the file is used.
        case warning
    }

    /// The file's path (or name) as given to the parser.
    package var file: String
    /// The 1-based line, where known (always for `.dnssd`; the parser's line for XML).
    package var line: Int?
    /// For XML: the element path, e.g. `/service-group/service[2]/port`.
    package var element: String?
    package var severity: Severity
    package var message: String

    package init(file: String, line: Int? = nil, element: String? = nil, severity: Severity = .error, message: String) {
        self.file = file
        self.line = line
        self.element = element
        self.severity = severity
        self.message = message
    }

    package var description: String {
        var text = file
        if let line { text += ":\(line)" }
        if let element { text += " \(element)" }
        return text + ": \(severity.rawValue): \(message)"
    }
}

/// Why a service definition file was refused: every problem found in it (errors, and any warnings).
package struct ServiceFileError: Error, Hashable, Sendable, CustomStringConvertible {
    package var file: String
    package var problems: [ServiceFileProblem]

    package init(file: String, problems: [ServiceFileProblem]) {
        self.file = file
        self.problems = problems
    }

    package var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Shared helpers for both formats.
enum ServiceFileSupport {
    static func validateInstance(_ name: String) -> String? {
        if name.isEmpty { return "the service name is empty" }
        let length = name.utf8.count
        if length > DNSName.maxLabelLength {
            return "the service name \"\(name)\" is \(length) bytes long; at most \(DNSName.maxLabelLength) are allowed"
        }
        // RFC 6763 §4.1.1: no control characters (the responder would refuse the name when publishing it).
        if name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "the service name \"\(DNSName.presentation(ofLabel: name.utf8))\" contains a control character"
        }
        return nil
    }

    /// Accepts `_printer` or `_printer._sub._http._tcp[.domain]`; returns the subtype label.
    static func subtypeLabel(_ text: String, of type: ServiceType) -> Result<String, ProblemText> {
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty { return .failure(ProblemText("the subtype is empty")) }
        if trimmed.contains(".") {
            do {
                let full = try ServiceType(trimmed)
                guard let subtype = full.subtype else {
                    return .failure(
                        ProblemText("\"\(trimmed)\" is not a subtype (expected _name or _name._sub.\(type.name))"))
                }
                guard full.baseType.name.lowercased() == type.name.lowercased(), full.transport == type.transport else {
                    return .failure(ProblemText("the subtype \"\(trimmed)\" is not of the service's type \(type)"))
                }
                return .success(String(decoding: subtype, as: UTF8.self))
            } catch {
                return .failure(ProblemText("bad subtype \"\(trimmed)\": \(error)"))
            }
        }
        do {
            _ = try type.withSubtype(trimmed)
        } catch {
            return .failure(ProblemText("bad subtype \"\(trimmed)\": \(error)"))
        }
        return .success(trimmed)
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Standard base64 (RFC 4648 §4) with padding optional; whitespace is not allowed.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for c in text.utf8 {
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if padding > 0 { return nil }
            let v: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            default: return nil
            }
            values.append(v)
        }
        if padding > 2 || values.count % 4 == 1 { return nil }
        if padding > 0 && (values.count + padding) % 4 != 0 { return nil }
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for v in values {
            buffer = buffer << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return bytes
    }
}

struct ProblemText: Error, Hashable {
    var text: String
    init(_ text: String) { self.text = text }
}

extension String {
    package func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
