// libFuzzer target for HeraldControl, the operators' control protocol (newline-delimited JSON): the executable target
// `control-fuzzer`, which Fuzz/build.sh builds with libFuzzer and AddressSanitizer. It uses the module's public API
// only.
//
// Input: one control byte, then a byte stream as a client (or the daemon) would write it on the socket.
//   control bits 0-1: the line buffer's limit (the default 512 KiB; 16; 64; 1024 bytes)
//   control bits 2-7: how the stream is cut into reads
// Every check states an invariant that holds for every input; a broken one traps with fatalError, which
// libFuzzer records as a crash. Lines that do not decode (a thrown DecodingError) are fine.

import Foundation
import FuzzSupport
import HeraldControl

/// libFuzzer's driver when built by Fuzz/build.sh; otherwise a replay of the files given (`FuzzSupport.main`).
@main
enum Main {
    static func main() { FuzzSupport.main(ControlFuzzer.run) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ControlFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutableRawPointer) -> CInt {
    FuzzSupport.writeSeedsIfAsked(ControlFuzzer.seeds)
    return 0
}

enum ControlFuzzer {
    static let newline = UInt8(ascii: "\n")

    static func run(_ input: [UInt8]) {
        guard let control = input.first else { return }
        let stream = Array(input.dropFirst())
        let limit = [ControlProtocol.maxLineLength, 16, 64, 1024][Int(control & 3)]

        // 1. Lines: the buffer gives exactly the non-empty newline-terminated lines, whatever the reads, and
        //    refuses a partial line only when it is longer than the limit.
        let expected = expectedLines(stream, limit: limit)
        let whole = splitLines([stream[...]], limit: limit)
        let base = Int(control >> 2)
        let pieces = FuzzSupport.chunks(stream, sizes: [UInt8(base + 1), 1, UInt8(base / 3 + 2)])
        let piecewise = splitLines(pieces, limit: limit)
        for (split, how) in [(whole, "in one read"), (piecewise, "in \(pieces.count) reads")] {
            guard split.tooLong == expected.tooLong else {
                fail(
                    "ControlLineBuffer \(split.tooLong ? "refuses" : "accepts") the stream read \(how) (limit \(limit))"
                )
            }
            // A read that fails returns none of the lines it completed; otherwise every line comes out.
            guard expected.lines.starts(with: split.lines), split.tooLong || split.lines == expected.lines else {
                fail("ControlLineBuffer gives other lines than the stream's when read \(how)")
            }
        }

        // 2. Every line (and the whole stream) as a request and as a reply.
        var checked = 0
        for line in expected.lines where checked < 8 {
            checkLine(line)
            checked += 1
        }
        if !stream.contains(newline) { checkLine(stream) }
    }

    struct Split {
        var lines: [[UInt8]] = []
        var tooLong = false
    }

    static func splitLines(_ pieces: [ArraySlice<UInt8>], limit: Int) -> Split {
        var buffer = ControlLineBuffer(maxLineLength: limit)
        var split = Split()
        for piece in pieces {
            do {
                split.lines += try buffer.feed(piece)
            } catch {
                guard error.limit == limit, !error.description.isEmpty else {
                    fail("LineTooLong names the wrong limit")
                }
                split.tooLong = true
                return split
            }
        }
        return split
    }

    /// The non-empty lines ended by a newline, up to the first longer than the limit, and whether the stream
    /// has a line (complete, or the partial one at its end) longer than the limit.
    static func expectedLines(_ stream: [UInt8], limit: Int) -> (lines: [[UInt8]], tooLong: Bool) {
        var parts = stream.split(separator: newline, omittingEmptySubsequences: false).map(Array.init)
        let partial = parts.removeLast()
        if let overlong = parts.firstIndex(where: { $0.count > limit }) {
            return (parts[..<overlong].filter { !$0.isEmpty }, true)
        }
        return (parts.filter { !$0.isEmpty }, partial.count > limit)
    }

    // MARK: - Requests and replies

    static func checkLine(_ line: [UInt8]) {
        if let request = try? ControlProtocol.decode(ControlRequest.self, from: line) {
            roundTrip(request, name: "ControlRequest")
        }
        if let reply = try? ControlProtocol.decode(ControlReply.self, from: line) {
            roundTrip(reply, name: "ControlReply")
            if let error = reply.error { _ = error.description }
        }
        if let error = try? ControlProtocol.decode(ControlError.self, from: line) {
            roundTrip(error, name: "ControlError")
        }
    }

    /// decode → line → decode gives the same value; the line is one line; encoding again gives the same bytes.
    static func roundTrip<Value: Codable & Equatable>(_ value: Value, name: String) {
        let encoded: [UInt8]
        do {
            encoded = try ControlProtocol.line(value)
        } catch {
            fail("a decoded \(name) does not encode: \(error)\nvalue: \(value)")
        }
        guard encoded.last == newline, encoded.firstIndex(of: newline) == encoded.count - 1 else {
            fail(
                "ControlProtocol.line(\(name)) is not exactly one line: \(String(decoding: encoded, as: UTF8.self).debugDescription)"
            )
        }
        let body = encoded.dropLast()
        let again: Value
        do {
            again = try ControlProtocol.decode(Value.self, from: body)
        } catch {
            fail("our own line for a \(name) does not decode: \(error)\nline: \(String(decoding: body, as: UTF8.self))")
        }
        guard again == value else {
            fail("decode(line(decode(x))) != decode(x) for a \(name)\nfirst:  \(value)\nsecond: \(again)")
        }
        guard (try? ControlProtocol.line(again)) == encoded else { fail("line(\(name)) is not stable") }
        // The line buffer gives the line back.
        var buffer = ControlLineBuffer()
        guard (try? buffer.feed(encoded)) == [Array(body)] else {
            fail("ControlLineBuffer does not give back our line")
        }
    }

    // MARK: - Seeds

    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let date = Date(timeIntervalSince1970: 1_790_000_000)
        var lines: [[UInt8]] = []
        for (index, command) in ControlRequest.Command.allCases.enumerated() {
            let request = ControlRequest(
                id: index + 1, command: command, app: "org.example.tictactoe",
                manifest: command == .appAdd
                    ? "{\"id\": \"org.example.tictactoe\", \"name\": \"Tic \\\"Tac\\\" Toe\"}" : nil,
                fileName: command == .appAdd ? "tictactoe.json" : nil, after: command == .log ? 41 : nil,
                limit: command == .log ? 10 : nil,
                topics: command == .subscribe ? ["requests", "decisions", "log"] : nil)
            if let line = try? ControlProtocol.line(request) { lines.append(line) }
        }
        let app = ControlApp(
            id: "org.example.tictactoe", name: "Tic Tac Toe", decision: "granted", decidedBy: "root", decidedAt: date,
            executables: ["/usr/bin/tictactoe"], systemdUnits: ["tictactoe.service"], pinnedExecutables: [],
            serviceTypes: ["_tictactoe._tcp"], usageDescription: "Finds players.", entitlements: [], addedAt: date,
            updatedAt: date, pendingRequests: 1)
        var reply = ControlReply(id: 3)
        reply.apps = [app]
        reply.app = app
        reply.change = "granted (was denied)"
        reply.warnings = ["no usage description"]
        let pending = ControlPendingRequest(
            app: "org.example.tictactoe", appName: "Tic Tac Toe", usageDescription: "Finds players.",
            operation: "browse", serviceType: "_tictactoe._tcp", subject: "uid 1000", firstSeen: date, lastSeen: date,
            count: 2)
        reply.requests = [pending]
        reply.request = pending
        reply.log = [
            ControlAuditLine(
                sequence: 42, time: date, app: "org.example.tictactoe", operation: "browse",
                serviceType: "_tictactoe._tcp",
                decision: "allow", reason: "granted", detail: "pid 1234")
        ]
        if let line = try? ControlProtocol.line(reply) { lines.append(line) }
        let failure = ControlReply.failure(
            id: 4, .invalidManifest, "the manifest is invalid", problems: ["id: missing"])
        if let line = try? ControlProtocol.line(failure) { lines.append(line) }
        let event = ControlReply(id: nil, event: "pending-request")
        if let line = try? ControlProtocol.line(event) { lines.append(line) }
        var seeds = lines.enumerated().map { (name: "line-\($0.offset)", bytes: [UInt8($0.offset * 4)] + $0.element) }
        seeds.append((name: "stream", bytes: [0] + lines.prefix(3).flatMap { $0 }))
        return seeds
    }

    static func fail(_ message: String) -> Never {
        fatalError("HeraldControl fuzz invariant broken: " + message)
    }
}
