#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What standard output is connected to, and the colours used only when it is a terminal.
enum Terminal {
    /// True when standard output is a terminal (then headers and colour are shown).
    static let standardOutputIsTerminal = isatty(1) == 1

    /// Colour only on a terminal, and never with `NO_COLOR` set or `TERM=dumb`.
    static let usesColour: Bool = {
        guard standardOutputIsTerminal, getenv("NO_COLOR") == nil else { return false }
        if let term = getenv("TERM"), String(cString: term) == "dumb" { return false }
        return true
    }()

    /// The ANSI colours herald uses.
    enum Colour: String {
        case green = "32"
        case red = "31"
        case cyan = "36"
        case dim = "2"
    }

    /// `text` in `colour` when colour is on, else unchanged.
    static func paint(_ text: String, _ colour: Colour) -> String {
        usesColour ? "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m" : text
    }
}

/// Writes lines to standard output at once (not buffered), so that a reader of a pipe sees each event
/// as it happens.
enum StandardOutput {
    static func line(_ text: String) {
        var bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }
}
