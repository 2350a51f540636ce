import Foundation
import HeraldControl
import HeraldDaemon
import Logging
import Synchronization
import Testing

/// What operators read is safe for a terminal and the journal: control characters in paths, names and messages are
/// shown as visible escapes, JSON stays JSON, and heraldd's log lines cannot be forged.
@Suite("Operator-facing text")
struct OperatorTextTests {
    /// An executable path that, printed raw, erases its line and draws a forged grant.
    static let forgingPath = "/tmp/x\u{1B}[2K\r2026-11-27 12:00:00  org.example.tictactoe  grant  granted (operator)"

    @Test("C0 controls and DEL become \\xNN, C1 controls and line-breaking format characters \\u{…}")
    func escapes() {
        #expect(
            OperatorText.escaped(Self.forgingPath)
                == "/tmp/x\\x1B[2K\\x0D2026-11-27 12:00:00  org.example.tictactoe  grant  granted (operator)")
        #expect(OperatorText.escaped("a\nb\tc\u{7F}d\u{0}") == "a\\x0Ab\\x09c\\x7Fd\\x00")
        #expect(OperatorText.escaped("x\u{9B}31my\u{85}") == "x\\u{9B}31my\\u{85}")
        #expect(OperatorText.escaped("evil\u{202E}txt.exe\u{2028}") == "evil\\u{202E}txt.exe\\u{2028}")
        // Letters of any script, emoji and DNS presentation escapes are shown as they are.
        let plain = "Wohnzimmer-Drucker é 日本 🎲 My\\.Printer\\032"
        #expect(OperatorText.escaped(plain) == plain)
        // Escaping is idempotent: escaped text has nothing left to escape.
        let once = OperatorText.escaped(Self.forgingPath + "\u{9B}")
        #expect(OperatorText.escaped(once) == once)
        #expect(!once.unicodeScalars.contains(where: OperatorText.isUnsafe))
    }

    @Test("Messages laid out over lines keep their newlines and lose every other control character")
    func keepingLines() {
        #expect(OperatorText.escapedKeepingLines("problems:\n  - \u{1B}[31mred\n") == "problems:\n  - \\x1B[31mred\n")
    }

    @Test("JSON lines stay valid JSON with the same values, with DEL, C1 and format characters as \\u escapes")
    func json() throws {
        struct Line: Codable, Equatable { var detail: String }
        let value = Line(detail: Self.forgingPath + "\u{7F}\u{9B}\u{202E}é")
        let encoded = String(decoding: try ControlProtocol.line(value).dropLast(), as: UTF8.self)
        let safe = OperatorText.jsonEscaped(encoded)
        #expect(!safe.unicodeScalars.contains(where: OperatorText.isUnsafe))
        #expect(safe.contains("\\u007f") && safe.contains("\\u009b") && safe.contains("\\u202e") && safe.contains("é"))
        #expect(try JSONDecoder().decode(Line.self, from: Data(safe.utf8)) == value)
        #expect(try JSONSerialization.jsonObject(with: Data(safe.utf8)) is [String: Any])
    }

    @Test("heraldd's log lines escape what they quote, one line per message")
    func logLines() {
        let lines = Mutex<[String]>([])
        let stream = EscapingLogStream { line in lines.withLock { $0.append(line) } }
        var handler = EscapingLogStream.handler(label: "heraldd", stream: stream)
        handler.logLevel = .info
        let logger = Logger(label: "heraldd") { _ in handler }
        logger.info(
            "app socket: refused browse _x._tcp for pid 7: refuse (unregistered): pid 7 uid 65534 \(Self.forgingPath)")
        logger.notice("two\nlines\u{9B}")
        let written = lines.withLock { $0 }
        #expect(written.count == 2)
        #expect(written.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().allSatisfy { $0 != "\n" } })
        #expect(written.allSatisfy { !$0.dropLast().unicodeScalars.contains(where: OperatorText.isUnsafe) })
        #expect(written[0].contains("uid 65534 /tmp/x\\x1B[2K\\x0D2026-11-27 12:00:00  org.example.tictactoe  grant"))
        #expect(written[0].contains(" info heraldd: [HeraldDaemonTests] app socket: refused browse"))
        #expect(written[1].hasSuffix("two\\x0Alines\\u{9B}\n"))
    }

    @Test("An upper bound of a list item's JSON length holds for the worst characters")
    func lengthBound() throws {
        let detail = String(repeating: "\u{1B}\"\\/é", count: 2_000)
        let line = ControlAuditLine(
            sequence: Int64.max, time: Date(), app: "org.example.tictactoe", operation: "browse",
            serviceType: "_tictactoe._tcp", decision: "refuse", reason: "unregistered",
            detail: detail, uid: UInt32.max, count: Int.max)
        #expect(try ControlProtocol.line(line).count <= line.encodedLengthBound)
        let request = ControlPendingRequest(
            app: "org.example.tictactoe", appName: "Tic Tac Toe",
            usageDescription: String(repeating: "\"\n", count: 500),
            operation: "address-lookup", serviceType: nil, subject: "address lookups",
            latestSubject: detail, firstSeen: Date(), lastSeen: Date(), count: Int.max)
        #expect(try ControlProtocol.line(request).count <= request.encodedLengthBound)
    }
}
