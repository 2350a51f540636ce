/// An IPv4 address, stored in network byte order as four bytes.
public struct IPv4Address: Hashable, Sendable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The address as a 32-bit number (first octet most significant).
    public var value: UInt32

    public init(_ value: UInt32) { self.value = value }
    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        value = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
    }

    /// The four bytes in network order.
    public var bytes: [UInt8] {
        [
            UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value),
        ]
    }

    /// Parses dotted-quad notation (`192.0.2.1`).
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var result: UInt32 = 0
        for part in parts {
            // Digits only: `UInt8(_:)` alone would also take a sign ("+1", "-0").
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ ("0"..."9").contains($0) }), let octet = UInt8(part)
            else { return nil }
            result = result << 8 | UInt32(octet)
        }
        value = result
    }

    public var description: String {
        "\(value >> 24).\((value >> 16) & 0xFF).\((value >> 8) & 0xFF).\(value & 0xFF)"
    }

    /// True for 169.254.0.0/16 (RFC 3927).
    public var isLinkLocal: Bool { value >> 16 == 0xA9FE }

    /// The reverse-mapping name `d.c.b.a.in-addr.arpa.` (RFC 1035 §3.5).
    public var reverseName: DNSName {
        let octets = bytes.reversed().map { String($0) } + ["in-addr", "arpa"]
        return try! DNSName(labelStrings: octets)  // 6 short labels always fit
    }

    public static func < (lhs: IPv4Address, rhs: IPv4Address) -> Bool { lhs.value < rhs.value }
}

/// An IPv6 address, stored as sixteen bytes in network order.
public struct IPv6Address: Hashable, Sendable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The first and last eight bytes as big-endian numbers.
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Builds an address from exactly sixteen bytes.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// The sixteen bytes in network order.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The eight 16-bit groups.
    public var groups: [UInt16] {
        (0..<4).map { UInt16(truncatingIfNeeded: high >> (48 - 16 * $0)) }
            + (0..<4).map { UInt16(truncatingIfNeeded: low >> (48 - 16 * $0)) }
    }

    /// True for fe80::/10 (RFC 4291 §2.5.6).
    public var isLinkLocal: Bool { high >> 54 == 0x3FA }

    /// Parses the text forms of RFC 4291 §2.2 (with `::`, and an embedded IPv4 tail). A zone (`%eth0`) is rejected.
    public init?(_ text: String) {
        guard !text.isEmpty, !text.contains("%") else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawGap = false
        let pieces = text.components(separatedByDoubleColon: ())
        guard pieces.count <= 2 else { return nil }
        func parseGroups(_ part: Substring, allowIPv4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, field) in fields.enumerated() {
                if index == fields.count - 1, allowIPv4Tail, field.contains(".") {
                    guard let v4 = IPv4Address(String(field)) else { return nil }
                    result.append(UInt16(v4.value >> 16))
                    result.append(UInt16(v4.value & 0xFFFF))
                } else {
                    guard (1...4).contains(field.count), field.allSatisfy(\.isHexDigit), field.allSatisfy(\.isASCII),
                        let group = UInt16(field, radix: 16)
                    else { return nil }
                    result.append(group)
                }
            }
            return result
        }
        if pieces.count == 2 {
            sawGap = true
            guard let h = parseGroups(pieces[0], allowIPv4Tail: false),
                let t = parseGroups(pieces[1], allowIPv4Tail: true)
            else { return nil }
            head = h
            tail = t
            guard head.count + tail.count <= 7 else { return nil }
        } else {
            guard let h = parseGroups(pieces[0], allowIPv4Tail: true), h.count == 8 else { return nil }
            head = h
        }
        let groups = head + Array(repeating: 0, count: sawGap ? 8 - head.count - tail.count : 0) + tail
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, group) in groups.enumerated() {
            if index < 4 { high = high << 16 | UInt64(group) } else { low = low << 16 | UInt64(group) }
        }
        self.init(high: high, low: low)
    }

    /// RFC 5952 text: lower-case hex, leading zeros dropped, the longest run of two or more zero groups as `::`;
    /// IPv4-mapped addresses (`::ffff:0:0/96`) in mixed notation, `::ffff:192.0.2.1` (RFC 5952 §5, as inet_ntop).
    public var description: String {
        if high == 0, low >> 32 == 0xFFFF {
            return "::ffff:" + IPv4Address(UInt32(truncatingIfNeeded: low)).description
        }
        let groups = self.groups
        var bestStart = -1
        var bestLength = 0
        var index = 0
        while index < 8 {
            if groups[index] == 0 {
                var end = index
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - index > bestLength {
                    bestStart = index
                    bestLength = end - index
                }
                index = end
            } else {
                index += 1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        var text = ""
        index = 0
        while index < 8 {
            if index == bestStart {
                text += "::"
                index += bestLength
                continue
            }
            if !text.isEmpty && !text.hasSuffix(":") { text += ":" }
            text += String(groups[index], radix: 16)
            index += 1
        }
        return text
    }

    /// The reverse-mapping name under `ip6.arpa.` (RFC 3596 §2.5).
    public var reverseName: DNSName {
        var labels: [String] = []
        for byte in bytes.reversed() {
            labels.append(String(byte & 0x0F, radix: 16))
            labels.append(String(byte >> 4, radix: 16))
        }
        return try! DNSName(labelStrings: labels + ["ip6", "arpa"])  // 34 one-byte labels: 73 bytes
    }

    public static func < (lhs: IPv6Address, rhs: IPv6Address) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

extension String {
    /// Splits at every "::" (used by IPv6 parsing; more than one occurrence is an error there).
    fileprivate func components(separatedByDoubleColon _: Void) -> [Substring] {
        var parts: [Substring] = []
        var start = startIndex
        var index = startIndex
        while index < endIndex {
            let next = self.index(after: index)
            if self[index] == ":" && next < endIndex && self[next] == ":" {
                parts.append(self[start..<index])
                start = self.index(after: next)
                index = start
            } else {
                index = next
            }
        }
        parts.append(self[start..<endIndex])
        return parts
    }
}
