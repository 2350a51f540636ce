import HeraldControl
import Testing

/// Inputs found by the fuzz targets in `Fuzz/` (see `Fuzz/README.md`) for the control protocol's line buffer, which
/// has no test target of its own, reduced. Each states what broke. (The service files' are in HeraldConfigTests.)
@Suite("Fuzz regressions (control lines)")
struct DaemonFuzzRegressionTests {
    /// Broke the line buffer's limit: a complete line longer than the limit was accepted when it arrived in
    /// one read, but refused when it arrived in pieces (the limit was checked only on the partial line held
    /// after a read). (Fuzz invariant: "ControlLineBuffer gives different lines when the stream comes in 56
    /// reads"; limit 16, a 75-byte request line.)
    @Test("A control line longer than the limit is refused however it is read (fuzz finding)")
    func controlLineLimit() throws {
        let line = Array(#"{"app":"org.example.tictactoe","command":"app-list","id":3,"version":1}"#.utf8) + [0x0A]
        var whole = ControlLineBuffer(maxLineLength: 16)
        #expect(throws: ControlLineBuffer.LineTooLong.self) { try whole.feed(line) }
        var pieces = ControlLineBuffer(maxLineLength: 16)
        #expect(throws: ControlLineBuffer.LineTooLong.self) {
            for start in stride(from: 0, to: line.count, by: 8) {
                _ = try pieces.feed(line[start..<min(start + 8, line.count)])
            }
        }
        // A line of exactly the limit still passes, and so do shorter lines around it in the same read.
        var exact = ControlLineBuffer(maxLineLength: 16)
        let lines = try exact.feed(Array("0123456789abcdef\nab\n\ncd\n".utf8))
        #expect(lines == [Array("0123456789abcdef".utf8), Array("ab".utf8), Array("cd".utf8)])
    }
}
