/// A manifest file as read, before validation: the value tree that JSON and XML property lists share.
///
/// Readers keep everything the file says — duplicate keys included, and in file order — so that the
/// validator can name every problem at once.
package indirect enum ManifestDocument: Hashable, Sendable {
    /// One key and its value in an object (dictionary), with the line it starts on when known.
    package struct Entry: Hashable, Sendable {
        package var key: String
        package var value: ManifestDocument
        package var line: Int?

        package init(key: String, value: ManifestDocument, line: Int? = nil) {
            self.key = key
            self.value = value
            self.line = line
        }
    }

    case string(String)
    /// A number; the text is kept as written (`3`, `1.5e2`).
    case number(String)
    case bool(Bool)
    case null
    case array([ManifestDocument])
    case object([Entry])
    /// A property-list value that a manifest never holds (`date`, `data`); carries the element name.
    case other(String)

    /// What kind of value this is, for messages: "a string", "an array", "an object".
    package var kindDescription: String {
        switch self {
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        case .other(let element): return "a <\(element)> value"
        }
    }

    /// A short rendering of the value for messages: strings quoted, containers summarised.
    package var shortDescription: String {
        switch self {
        case .string(let text): return ManifestDocument.quoted(text)
        case .number(let text): return text
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let items): return items.isEmpty ? "[]" : "[…\(items.count) items]"
        case .object(let entries): return entries.isEmpty ? "{}" : "{…\(entries.count) keys}"
        case .other(let element): return "<\(element)>"
        }
    }

    /// `text` in double quotes with control characters, quotes and backslashes escaped, cut at 80 characters.
    static func quoted(_ text: String) -> String {
        var out = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 80 {
                out += "…"
                break
            }
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
            count += 1
        }
        return out + "\""
    }
}

/// Why a manifest file could not be read as JSON or as an XML property list, with the place.
package struct ManifestSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line of the problem, when known.
    package var line: Int?
    /// 1-based column (in bytes) of the problem, when known.
    package var column: Int?
    /// What is wrong, in words.
    package var message: String

    package init(line: Int? = nil, column: Int? = nil, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    package var description: String {
        switch (line, column) {
        case (let line?, let column?): return "line \(line), column \(column): \(message)"
        case (let line?, nil): return "line \(line): \(message)"
        default: return message
        }
    }
}
