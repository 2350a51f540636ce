import HeraldControl

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

/// A piece of a line for people: text, in a colour (on a terminal that shows colour) or not.
struct Painted {
    var text: String
    var colour: Terminal.Colour?

    init(_ text: String, _ colour: Terminal.Colour? = nil) {
        self.text = text
        self.colour = colour
    }
}

/// Writes lines to standard output at once (not buffered), so that a reader of a pipe sees each event
/// as it happens. Text for people shows every character a terminal would act on as a visible escape
/// (``OperatorText``): names, paths and descriptions come from programs and networks herald does not trust, and a
/// newline or an escape sequence in them must not draw lines of their own.
enum StandardOutput {
    /// One line of text for people.
    static func line(_ text: String) {
        write(OperatorText.escaped(text))
    }

    /// One line of text for people, some of it painted.
    static func line(_ pieces: [Painted]) {
        write(
            pieces.map { piece in
                let text = OperatorText.escaped(piece.text)
                return piece.colour.map { Terminal.paint(text, $0) } ?? text
            }.joined())
    }

    /// One line of JSON (`--json`): still valid JSON, with the characters JSON leaves raw escaped.
    static func jsonLine(_ json: String) {
        write(OperatorText.jsonEscaped(json))
    }

    private static func write(_ text: String) {
        writeAll(text + "\n", to: 1)
    }
}

/// Writes all of `text` to the file descriptor `fd` (1 standard output, 2 standard error), retrying after signals;
/// a descriptor that fails (a closed pipe) takes what it took.
func writeAll(_ text: String, to fd: Int32) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}
