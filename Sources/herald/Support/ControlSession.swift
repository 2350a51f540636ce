import ArgumentParser
import HeraldClient
import HeraldControl

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How to reach the daemon's control socket: shared by the operator commands.
struct ControlOptions: ParsableArguments {
    @Option(
        name: .customLong("control-socket"),
        help: ArgumentHelp(
            "The daemon's control socket. Default: $HERALD_CONTROL_SOCKET when set, else "
                + "\(ControlConnection.defaultPath).", valueName: "path"))
    var controlSocket: String?

    @Flag(name: .long, help: "Print one JSON object per line.")
    var json = false
}

/// An operator command's conversation with the daemon over the control socket. Failures become messages that
/// say who may do this, or how to start the daemon, with the exit statuses of the contract.
struct ControlSession {
    let connection: ControlConnection

    init(options: ControlOptions) throws {
        let path = ControlConnection.path(
            explicit: options.controlSocket, environment: ProcessInfo.processInfo.environment)
        do {
            connection = try ControlConnection(path: path)
        } catch .permissionDenied {
            throw CommandFailure(
                "only operators may do this: root, or members of the herald group (the control socket \(path) is "
                    + "not open to uid \(getuid())); ask an operator, or run it with sudo",
                exitCode: ExitStatus.notPermitted)
        } catch {
            throw DaemonSession.failure(for: error, on: .control)
        }
    }

    /// Sends a request and returns its successful reply; a failed reply ends the command with its message.
    @discardableResult
    func call(
        _ command: ControlRequest.Command, app: String? = nil, manifest: String? = nil, fileName: String? = nil,
        after: Int64? = nil, limit: Int? = nil, topics: [String]? = nil, offset: Int? = nil
    ) throws -> ControlReply {
        let request = ControlRequest(
            id: 0, command: command, app: app, manifest: manifest, fileName: fileName,
            after: after, limit: limit, topics: topics, offset: offset)
        let reply: ControlReply
        do {
            reply = try connection.call(request)
        } catch {
            throw DaemonSession.failure(for: error, on: .control)
        }
        if let error = reply.error, !reply.ok { throw Self.failure(for: error) }
        return reply
    }

    /// A whole list (`requests`, `app-list`), asked for page by page while the daemon says there is `more`. The
    /// list may change between pages: an item seen twice (`key`) is kept once.
    func list<Item, Key: Hashable>(
        _ command: ControlRequest.Command, key: (Item) -> Key,
        _ items: (ControlReply) -> [Item]?
    ) throws -> [Item] {
        var all: [Item] = []
        var received = 0
        var seen: Set<Key> = []
        while true {
            let reply = try call(command, offset: received)
            let page = items(reply) ?? []
            received += page.count
            all += page.filter { seen.insert(key($0)).inserted }
            guard reply.more == true, !page.isEmpty else { return all }
        }
    }

    /// The newest `count` audit lines, oldest first, handed to `body` page by page as they arrive; returns the last
    /// line's sequence number (0 when there is none).
    @discardableResult
    func log(newest count: Int, _ body: ([ControlAuditLine]) -> Void) throws -> Int64 {
        var reply = try call(.log, limit: count)
        var received = 0
        var last: Int64 = 0
        while true {
            let lines = reply.log ?? []
            body(lines)
            received += lines.count
            last = lines.last?.sequence ?? last
            guard reply.more == true, !lines.isEmpty, received < count else { return last }
            reply = try call(.log, after: last, limit: count - received)
        }
    }

    /// The next event after `subscribe`; nil after a short wait without one (so Ctrl-C is noticed).
    func nextEvent() throws -> ControlReply? {
        do {
            return try connection.nextEvent(timeout: nil)
        } catch {
            throw DaemonSession.failure(for: error, on: .control)
        }
    }

    static func failure(for error: ControlError) -> CommandFailure {
        var message = error.message
        if let problems = error.problems, !problems.isEmpty {
            message += ":\n" + problems.map { "  - " + $0 }.joined(separator: "\n")
        }
        switch error.code {
        case .notOperator:
            return CommandFailure(message + "; ask an operator, or run it with sudo", exitCode: ExitStatus.notPermitted)
        case .invalidManifest, .selectorConflict, .unknownApp:
            return CommandFailure(message, exitCode: ExitStatus.badInput)
        case .unsupportedVersion, .malformedRequest:
            return CommandFailure(message, exitCode: ExitStatus.usage)
        case .storeFailure:
            return CommandFailure(
                message + "; check heraldd's log (journalctl -u heraldd)",
                exitCode: ExitStatus.daemonUnavailable)
        }
    }
}

/// Printing control-protocol values for people and for scripts.
enum ControlOutput {
    /// One value as a JSON line (dates in ISO 8601).
    static func json(_ value: some Encodable) {
        guard let bytes = try? ControlProtocol.line(value) else { return }
        StandardOutput.jsonLine(String(decoding: bytes.dropLast(), as: UTF8.self))
    }

    /// A date as people read it in lists: `2026-11-22 07:41:05`.
    static func time(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return "\(date)" }
        var text = [CChar](repeating: 0, count: 32)
        let count = strftime(&text, text.count, "%Y-%m-%d %H:%M:%S", &local)
        return String(decoding: text[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `“Tic Tac Toe”`.
    static func quoted(_ name: String) -> String { "\u{201C}\(name)\u{201D}" }

    /// What a pending request asks for: its subject, or for an app's address lookups, how many and the latest.
    static func subject(_ request: ControlPendingRequest) -> String {
        guard let latest = request.latestSubject else { return request.subject }
        return "\(request.subject) (latest \(latest))"
    }

    /// The lines of `app show`.
    static func describe(_ app: ControlApp) -> [String] {
        var lines = [
            "\(app.id)  \(quoted(app.name))",
            "  decision:      \(app.decision)" + (app.decidedBy.map { " by \($0)" } ?? "")
                + (app.decidedAt.map { " at \(time($0))" } ?? ""),
            "  service types: " + (app.serviceTypes.isEmpty ? "none" : app.serviceTypes.joined(separator: " ")),
            "  usage:         " + (app.usageDescription ?? "(none: every request is refused, no-usage-description)"),
        ]
        if !app.executables.isEmpty {
            lines.append(
                "  executables:   "
                    + app.executables.map {
                        app.pinnedExecutables.contains($0) ? $0 + " (SHA-256 pinned)" : $0
                    }.joined(separator: " "))
        }
        if !app.systemdUnits.isEmpty { lines.append("  systemd units: " + app.systemdUnits.joined(separator: " ")) }
        if !app.entitlements.isEmpty { lines.append("  entitlements:  " + app.entitlements.joined(separator: " ")) }
        lines.append("  pending:       \(app.pendingRequests) request\(app.pendingRequests == 1 ? "" : "s")")
        if let blocked = app.blockedPackets {
            lines.append(
                "  blocked:       \(blocked) packet\(blocked == 1 ? "" : "s") held back by the kernel rules"
                    + (app.lastBlockedDestination.map { ", the latest to \($0)" } ?? ""))
        }
        lines.append("  registered:    \(time(app.addedAt)), updated \(time(app.updatedAt))")
        return lines
    }
}
