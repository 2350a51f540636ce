/// The canonical JSON form of a manifest: the keys in the order of docs/permissions.md ("The app manifest"),
/// two-space indentation, empty optional keys left out. The store keeps this text, and ``ManifestParser`` reads
/// it back to an equal manifest.
extension Manifest {
    /// The manifest as canonical JSON text.
    package var jsonText: String {
        var fields: [(ManifestKey, String)] = [
            (.id, Self.json(id.rawValue)),
            (.name, Self.json(name)),
        ]
        if !executables.isEmpty { fields.append((.executables, Self.json(executables))) }
        if !systemdUnits.isEmpty { fields.append((.systemdUnits, Self.json(systemdUnits))) }
        if !executableSHA256.isEmpty {
            let pins = executableSHA256.sorted { $0.key < $1.key }
                .map { "    \(Self.json($0.key)): \(Self.json($0.value.hex))" }
            fields.append((.executableSHA256, "{\n" + pins.joined(separator: ",\n") + "\n  }"))
        }
        fields.append((.bonjourServices, Self.json(bonjourServices.map(\.description))))
        if let usageDescription { fields.append((.usageDescription, Self.json(usageDescription))) }
        if !entitlements.isEmpty { fields.append((.entitlements, Self.json(entitlements))) }
        return "{\n" + fields.map { "  \(Self.json($0.0.rawValue)): \($0.1)" }.joined(separator: ",\n") + "\n}\n"
    }

    private static func json(_ strings: [String]) -> String {
        "[" + strings.map(json).joined(separator: ", ") + "]"
    }

    /// A JSON string literal (RFC 8259 §7): quotes, backslashes and control characters escaped.
    package static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
