import Foundation
import HeraldKit
import Synchronization

/// How the program ends: the first `finish` wins, and `exitCode()` waits for it.
final class Outcome: Sendable {
    private struct State {
        var code: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }
    private let state = Mutex(State())

    func finish(exitCode: Int32) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            guard state.code == nil else { return nil }
            state.code = exitCode
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: exitCode)
    }

    func exitCode() async -> Int32 {
        await withCheckedContinuation { continuation in
            let code = state.withLock { state -> Int32? in
                if state.code == nil { state.waiter = continuation }
                return state.code
            }
            if let code { continuation.resume(returning: code) }
        }
    }
}

/// The names this player is advertised under (asked for, and given after a rename), so that it does not
/// list itself.
final class OwnNames: Sendable {
    private let names: Mutex<Set<String>>

    init(requested: String) { names = Mutex([requested.lowercased()]) }

    func add(_ name: String) { names.withLock { _ = $0.insert(name.lowercased()) } }
    func contains(_ name: String) -> Bool { names.withLock { $0.contains(name.lowercased()) } }
}

/// What the player prints: text for people, or JSON lines.
struct Output: Sendable {
    var json: Bool

    func advertising(_ name: String, port: UInt16) {
        if json {
            line(["event": "advertising", "name": name, "port": Int(port)])
        } else {
            say("advertising \"\(name)\" (_tictactoe._tcp) on port \(port)")
        }
    }

    func waiting(_ what: String, reason: String) {
        if json {
            line(["event": "waiting", "operation": what, "reason": reason])
        } else {
            say("waiting for permission: \(reason) (\(what))")
        }
    }

    func player(_ change: BrowseChange) {
        let result = change.result
        let interface = Self.interfaceName(result.interfaceIndex)
        switch change {
        case .added:
            if json {
                line(["event": "player-found", "name": result.instance.name, "interface": interface])
            } else {
                say("+ player \"\(result.instance.name)\" on \(interface)")
            }
        case .removed:
            if json {
                line(["event": "player-gone", "name": result.instance.name, "interface": interface])
            } else {
                say("- player \"\(result.instance.name)\" on \(interface)")
            }
        }
    }

    func failure(_ text: String) {
        if json {
            line(["event": "error", "message": text])
        } else {
            FileHandle.standardError.write(Data("tictactoe: \(text)\n".utf8))
        }
    }

    /// One line of text, written at once (also into a pipe), so that a watcher sees each event as it happens.
    private func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    private func line(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    static func interfaceName(_ index: UInt32) -> String {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &buffer) != nil else { return "interface \(index)" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
