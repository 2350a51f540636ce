/// Text shown to operators, made safe for a terminal and a journal.
///
/// Much of what operators read comes from people they need not trust: executable paths and unit names of any
/// local process, names looked up, service names from the network. A terminal acts on control characters instead
/// of showing them: an escape sequence in a path could erase the line it is on and draw a forged "granted" in its
/// place, and a newline starts what looks like a line of its own. So every operator-facing text shows them as
/// visible escapes: C0 controls (newline and tab included) and DEL as `\xNN`, C1 controls as `\u{NN}`, and the
/// Unicode formatting characters that reorder or break lines (bidirectional overrides and isolates, the line and
/// paragraph separators) as `\u{NNNN}`. Everything else, non-ASCII letters included, is shown as it is.
public enum OperatorText {
    /// True for a character a terminal may act on rather than show.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// `text` with every unsafe character shown as a visible escape (`\x1B`, `\x0A`, `\u{9B}`, `\u{202E}`).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let escape = scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{" + hex + "}"
            result.append(contentsOf: escape.unicodeScalars)
        }
        return String(result)
    }

    /// `text` escaped line by line: newlines are kept (the text is meant to span lines), every other unsafe
    /// character is escaped. For messages that the program itself lays out over several lines.
    public static func escapedKeepingLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }
            .joined(separator: "\n")
    }

    /// A line of JSON with every unsafe character that JSON leaves raw (DEL, C1 and the formatting characters; C0
    /// controls are always escaped by JSON) written as a `\u` escape of four hex digits, which JSON readers decode to the same
    /// character: the line stays valid JSON with the same value, and a terminal shows it without acting on it.
    /// These characters can only occur inside strings, so replacing them anywhere is safe.
    public static func jsonEscaped(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: isUnsafe) else { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard isUnsafe(scalar) else {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
        return String(result)
    }
}
