/// An app's reverse-DNS identifier (`org.example.tictactoe`), unique among registered manifests.
///
/// Rules: 2 or more dot-separated labels, each 1–63 ASCII letters, digits, hyphens or underscores, not starting
/// or ending with a hyphen; 255 characters at most. Spelling is kept for display, but equality and hashing
/// ignore ASCII case, as for bundle identifiers, so `Org.Example.App` and `org.example.app` are one app.
package struct AppID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The longest identifier accepted.
    package static let maxLength = 255
    /// The longest label accepted.
    package static let maxLabelLength = 63

    /// The identifier as written.
    package let rawValue: String

    /// Validates `text` as an app identifier.
    package init(_ text: String) throws(AppIDError) {
        try Self.validate(text)
        rawValue = text
    }

    /// The identifier in lower case, the key used for comparisons and in the store.
    package var normalized: String { String(rawValue.lowercased()) }

    package var description: String { rawValue }

    package static func == (lhs: AppID, rhs: AppID) -> Bool { lhs.normalized == rhs.normalized }
    package func hash(into hasher: inout Hasher) { hasher.combine(normalized) }
    package static func < (lhs: AppID, rhs: AppID) -> Bool { lhs.normalized < rhs.normalized }

    /// Checks `text` against the identifier rules.
    package static func validate(_ text: String) throws(AppIDError) {
        if text.isEmpty { throw .empty }
        if text.utf8.count > maxLength { throw .tooLong(text.utf8.count) }
        if let bad = text.unicodeScalars.first(where: { !isAllowed($0) && $0 != "." }) {
            throw .invalidCharacter(String(bad))
        }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count < 2 { throw .notReverseDNS }
        for label in labels {
            if label.isEmpty { throw .emptyLabel }
            if label.utf8.count > maxLabelLength { throw .labelTooLong(String(label)) }
            if label.hasPrefix("-") || label.hasSuffix("-") { throw .hyphenAtLabelEdge(String(label)) }
        }
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_": return true
        default: return false
        }
    }
}

/// Why a text is not an app identifier; the description says how to write one.
package enum AppIDError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(Int)
    case invalidCharacter(String)
    case notReverseDNS
    case emptyLabel
    case labelTooLong(String)
    case hyphenAtLabelEdge(String)

    package var description: String {
        let shape = "write a reverse-DNS identifier such as 'org.example.tictactoe'"
        switch self {
        case .empty: return "the identifier is empty: " + shape
        case .tooLong(let count):
            return "the identifier has \(count) characters; at most \(AppID.maxLength) are allowed"
        case .invalidCharacter(let character):
            return "\(ManifestDocument.quoted(character)) is not allowed: use only letters, digits, hyphens, "
                + "underscores and dots (" + shape + ")"
        case .notReverseDNS: return "the identifier has no dot: " + shape
        case .emptyLabel:
            return "the identifier has an empty part (two dots in a row, or a dot at either end): " + shape
        case .labelTooLong(let label):
            return "the part '\(label)' has \(label.utf8.count) characters; at most \(AppID.maxLabelLength) are allowed"
        case .hyphenAtLabelEdge(let label): return "the part '\(label)' must not begin or end with a hyphen"
        }
    }
}
