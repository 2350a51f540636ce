import HeraldWire

/// Avahi's spellings of names and values, to and from the dnssd forms the sessions use.
package enum AvahiNames {
    /// A name without its final dot, as Avahi writes types, domains and host names (`_http._tcp`, `local`).
    package static func undotted(_ name: String) -> String {
        name.hasSuffix(".") && name != "." ? String(name.dropLast()) : name
    }

    /// True for a name `SetHostName` takes, as Avahi's `avahi_is_valid_host_name` does: one label of 1 to 63
    /// bytes (no dot: the domain is `local`), without control characters.
    package static func isValidHostLabel(_ label: String) -> Bool {
        let bytes = label.utf8
        return !bytes.isEmpty && bytes.count <= 63
            && !bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F }
    }

    /// The dnssd subtype label of an Avahi subtype (`_printer._sub._http._tcp` → `_printer`), or nil when it is not
    /// a subtype of `type`.
    package static func subtypeLabel(_ subtype: String, of type: String) -> String? {
        let labels = undotted(subtype).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard labels.count >= 3, labels[1].lowercased() == "_sub", !labels[0].isEmpty else { return nil }
        let base = labels.dropFirst(2).joined(separator: ".")
        guard base.lowercased() == undotted(type).lowercased() else { return nil }
        return labels[0]
    }

    /// A TXT record's wire bytes from Avahi's `aay`; nil when a string is longer than 255 bytes.
    package static func txtRData(_ strings: [[UInt8]]) -> [UInt8]? {
        var bytes: [UInt8] = []
        for string in strings {
            guard string.count <= 255 else { return nil }
            bytes.append(UInt8(string.count))
            bytes += string
        }
        return bytes
    }

    /// Avahi's `aay` for a TXT record's wire bytes: its strings, none for an empty record (a lone empty string).
    package static func txtStrings(_ rdata: [UInt8]) -> [[UInt8]] {
        var strings: [[UInt8]] = []
        var index = 0
        while index < rdata.count {
            let length = Int(rdata[index])
            let end = min(rdata.count, index + 1 + length)
            strings.append(Array(rdata[(index + 1)..<end]))
            index = end
        }
        if strings == [[]] { return [] }
        return strings
    }

    /// An address record's data as Avahi prints it (dotted IPv4, RFC 5952 IPv6); nil for other lengths.
    package static func address(_ rdata: [UInt8]) -> String? {
        switch rdata.count {
        case 4: return rdata.map(String.init).joined(separator: ".")
        case 16: return IPv6Address(bytes: rdata)?.description
        default: return nil
        }
    }

    /// A service type found by type enumeration, from the dnssd reply's split (`_http`, `_tcp.local.`, `.`):
    /// Avahi's type and domain (`_http._tcp`, `local`).
    package static func enumeratedType(name: String, regtype: String, domain: String) -> (type: String, domain: String)
    {
        var labels = ([name] + undotted(regtype).split(separator: ".").map(String.init))
        if domain != "." && !domain.isEmpty { labels += undotted(domain).split(separator: ".").map(String.init) }
        let type = labels.prefix(2).joined(separator: ".")
        let rest = labels.dropFirst(2).joined(separator: ".")
        return (type, rest.isEmpty ? "local" : rest)
    }

    /// Avahi's next name for a service after a collision: `Name` → `Name #2`, `Name #2` → `Name #3`.
    package static func alternativeServiceName(_ name: String) -> String {
        if let (base, number) = numbered(name, separator: " #") { return base + " #\(number + 1)" }
        return String(name.prefix(60)) + " #2"
    }

    /// Avahi's next host name after a collision: `host` → `host-2`, `host-2` → `host-3`.
    package static func alternativeHostName(_ name: String) -> String {
        if let (base, number) = numbered(name, separator: "-") { return base + "-\(number + 1)" }
        return String(name.prefix(60)) + "-2"
    }

    /// `base` and `number` of a name ending in `separator` and a positive number.
    private static func numbered(_ name: String, separator: String) -> (String, Int)? {
        let characters = Array(name)
        let digits = characters.reversed().prefix { $0.isASCII && $0.isNumber }.count
        let marker = Array(separator)
        guard digits > 0, characters.count >= digits + marker.count,
            Array(characters[(characters.count - digits - marker.count)..<(characters.count - digits)]) == marker,
            let number = Int(String(characters.suffix(digits))), number >= 1
        else { return nil }
        return (String(characters.prefix(characters.count - digits - marker.count)), number)
    }
}
