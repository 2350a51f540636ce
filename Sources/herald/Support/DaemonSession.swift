import ArgumentParser
import HeraldClient
import HeraldIPC

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One command's conversation with the daemon: a shared connection on which every operation of the
/// command runs, the permission state of each operation, and waiting that Ctrl-C can interrupt.
///
/// Operations the daemon refuses outright (NoAuth in the status: rules 2–4 of the permission model) end
/// the command with exit status 77. Operations it parks (status NoError, then a reply carrying NoAuth) are
/// reported once on standard error as `waiting for permission: …`; the command goes on waiting, since a
/// grant makes results flow without asking again, unless `--no-wait` was given.
final class DaemonSession {
    /// The command as the user would name it in a message: `browse _http._tcp`.
    let label: String
    let connection: DNSSDConnection
    private let noWait: Bool
    private let socketPath: String?
    private var nextContext: UInt64 = 1
    /// What each operation is, for messages: `resolve "My Printer" _ipp._tcp`.
    private var descriptions: [ClientContext: String] = [:]
    /// Operations whose last word from the daemon was NoAuth.
    private(set) var parked: Set<ClientContext> = []
    /// True when Ctrl-C (or SIGTERM) ended the wait.
    private(set) var wasInterrupted = false

    /// Connects to the daemon (at `socketPath`, `DNSSD_UDS_PATH` or the default path) and opens a shared
    /// connection. Failures become messages that say how to start the daemon or reach its socket. With a
    /// `timeout` (the command's `--timeout`, seconds), a daemon that does not answer a request gives up
    /// after that long rather than the usual ten seconds.
    init(socketPath: String?, label: String, noWait: Bool, timeout: Double? = nil) throws {
        self.label = label
        self.noWait = noWait
        self.socketPath = socketPath
        do {
            connection = try DNSSDConnection(explicitPath: socketPath, environment: ProcessInfo.processInfo.environment)
            if let timeout {
                connection.statusTimeout = min(
                    connection.statusTimeout, .milliseconds(Int64((timeout * 1000).rounded(.up))))
            }
            let status = try connection.startSharedConnection()
            if status != .noError { throw DaemonSession.failure(for: status, operation: label) }
        } catch let error as DNSSDClientError {
            throw DaemonSession.failure(for: error)
        }
    }

    deinit { connection.close() }

    // MARK: - Operations

    /// Starts an operation and returns the context its replies carry. A refusal ends the command.
    @discardableResult
    func start(_ request: Request, describedAs description: String) throws -> ClientContext {
        let context = ClientContext(rawValue: nextContext)
        nextContext += 1
        let status: DNSServiceError
        do {
            status = try connection.start(request, context: context)
        } catch {
            throw DaemonSession.failure(for: error)
        }
        if status == .noAuth, let why = permissionExplanation() {
            throw CommandFailure(
                "not permitted (NoAuth \(DNSServiceError.noAuth.rawValue), \(why.reason)): \(why.text)",
                exitCode: ExitStatus.notPermitted, operation: description)
        }
        guard status == .noError else { throw DaemonSession.failure(for: status, operation: description) }
        descriptions[context] = description
        return context
    }

    /// Starts several operations at once (every request sent before any status is read) and returns their contexts
    /// in order. A refusal ends the command, as with `start`.
    func startAll(_ operations: [(request: Request, description: String)]) throws -> [ClientContext] {
        let contexts = operations.indices.map { ClientContext(rawValue: nextContext + UInt64($0)) }
        nextContext += UInt64(operations.count)
        let statuses: [DNSServiceError]
        do {
            statuses = try connection.startAll(zip(operations, contexts).map { ($0.request, $1) })
        } catch {
            throw DaemonSession.failure(for: error)
        }
        for (index, status) in statuses.enumerated() {
            let description = operations[index].description
            if status == .noAuth, let why = permissionExplanation() {
                throw CommandFailure(
                    "not permitted (NoAuth \(DNSServiceError.noAuth.rawValue), \(why.reason)): \(why.text)",
                    exitCode: ExitStatus.notPermitted, operation: description)
            }
            guard status == .noError else { throw DaemonSession.failure(for: status, operation: description) }
            descriptions[contexts[index]] = description
        }
        return contexts
    }

    /// True when replies already received wait to be taken: `next` returns one without waiting.
    var hasBufferedReplies: Bool { connection.hasBufferedReplies }

    /// Stops an operation (nothing more arrives for its context).
    func cancel(_ context: ClientContext) throws {
        descriptions[context] = nil
        parked.remove(context)
        do {
            try connection.cancel(context)
        } catch {
            throw DaemonSession.failure(for: error)
        }
    }

    /// Ends every operation (registrations are withdrawn by the daemon with goodbyes).
    func close() { connection.close() }

    // MARK: - Waiting

    /// The next reply that carries a result, or nil when `deadline` passes or the user interrupts.
    ///
    /// NoAuth replies are consumed here: the operation is marked parked and the user told once (or the
    /// command ends with 77 under `--no-wait`), and `onParked` learns which operation the daemon holds (at
    /// its start, or because its permission was taken back while it ran; it may hear of one more than once).
    /// Replies of cancelled operations are dropped.
    func next(
        until deadline: ContinuousClock.Instant?,
        onParked: (ClientContext) throws -> Void = { _ in }
    ) throws -> ReceivedReply? {
        while true {
            if Interruption.signal != nil {
                wasInterrupted = true
                return nil
            }
            // Wait in short slices, so that a signal delivered to another thread is noticed soon too.
            var slice = Duration.milliseconds(250)
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero { return nil }
                slice = min(slice, remaining)
            }
            let received: ReceivedReply?
            do {
                received = try connection.nextReceivedReply(timeout: slice)
            } catch {
                throw DaemonSession.failure(for: error)
            }
            guard let received else { continue }
            guard let description = descriptions[received.context] else { continue }
            if received.reply.error == .noAuth {
                // What the operation showed is taken back first, even when --no-wait then ends the command.
                try onParked(received.context)
                try park(received.context, description: description)
                continue
            }
            if parked.remove(received.context) != nil, Terminal.standardOutputIsTerminal {
                printError("permission granted: \(description)")
            }
            return received
        }
    }

    /// Ends the command with 77 if an operation is still waiting for permission (after `--timeout`, or
    /// when interrupted).
    func requirePermission(waited: Double?) throws {
        guard let context = parked.min(by: { $0.rawValue < $1.rawValue }), let description = descriptions[context]
        else { return }
        let how =
            waited.map { "still waiting for an operator's decision after \(DaemonSession.seconds($0))" }
            ?? "still waiting for an operator's decision"
        if let why = permissionExplanation() {
            // Only an undecided app waits for a decision: say what a denial or a removed manifest did instead.
            let state =
                switch why.reason {
                case "not-determined": how
                case "denied": "denied by an operator"
                default: "no longer allowed"
                }
            throw CommandFailure(
                "not permitted (NoAuth \(DNSServiceError.noAuth.rawValue), \(why.reason)): \(state): \(why.text)",
                exitCode: ExitStatus.notPermitted, operation: description)
        }
        throw CommandFailure(
            "not permitted (NoAuth \(DNSServiceError.noAuth.rawValue)): \(how); "
                + "an operator can allow it with: herald grant APP-ID (herald requests lists the waiting apps)",
            exitCode: ExitStatus.notPermitted, operation: description)
    }

    private func park(_ context: ClientContext, description: String) throws {
        guard parked.insert(context).inserted else { return }
        if noWait {
            let why = permissionExplanation()
            throw CommandFailure(
                "not permitted (NoAuth \(DNSServiceError.noAuth.rawValue)\(why.map { ", " + $0.reason } ?? "")): the daemon "
                    + "holds the request until an operator decides, and --no-wait was given; "
                    + (why?.text
                        ?? "an operator can allow it with: herald grant APP-ID (herald requests lists the waiting apps)"),
                exitCode: ExitStatus.notPermitted, operation: description)
        }
        if let why = permissionExplanation() {
            printError(
                "waiting for permission: \(description) (NoAuth \(DNSServiceError.noAuth.rawValue), \(why.reason)): "
                    + "\(why.text). Still waiting…")
            return
        }
        printError(
            "waiting for permission: \(description) is held until an operator decides "
                + "(NoAuth \(DNSServiceError.noAuth.rawValue)); an operator can allow it with: herald grant APP-ID "
                + "(herald requests lists the waiting apps). Still waiting…")
    }

    // MARK: - Messages

    /// Why the daemon answered this process NoAuth, asked on a connection of its own (Herald's
    /// `HeraldPermissionExplanation` property): the reason code and the explanation with its fix.
    private func permissionExplanation() -> (reason: String, text: String)? {
        guard
            let connection = try? DNSSDConnection(
                explicitPath: socketPath, environment: ProcessInfo.processInfo.environment)
        else { return nil }
        defer { connection.close() }
        guard let reply = try? connection.property(named: IPCConstants.permissionExplanationProperty),
            reply.status == .noError, !reply.value.isEmpty
        else { return nil }
        let text = String(decoding: reply.value, as: UTF8.self)
        guard let colon = text.firstRange(of: ": ") else { return ("refused", text) }
        return (String(text[..<colon.lowerBound]), String(text[colon.upperBound...]))
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// Which of the daemon's sockets a command talks to, for messages that say how to point herald at it.
    enum Socket {
        case app, control

        /// The option and the environment variable that name it.
        var setting: (option: String, variable: String) {
            switch self {
            case .app: return ("--socket", "DNSSD_UDS_PATH")
            case .control: return ("--control-socket", "HERALD_CONTROL_SOCKET")
            }
        }

        var name: String { self == .app ? "app socket" : "control socket" }
    }

    /// The message and exit status for a connection problem on `socket`.
    static func failure(for error: Error, on socket: Socket = .app) -> CommandFailure {
        if let failure = error as? CommandFailure { return failure }
        guard let error = error as? DNSSDClientError else {
            return CommandFailure("\(error)", exitCode: ExitStatus.failure)
        }
        let (option, variable) = socket.setting
        let howToStart =
            "start it with: systemctl start heraldd (or run heraldd), or give its \(socket.name) with \(option) PATH or \(variable)"
        switch error {
        case .daemonNotRunning:
            return CommandFailure("\(error); \(howToStart)", exitCode: ExitStatus.daemonUnavailable)
        case .permissionDenied:
            return CommandFailure(
                "\(error); the socket's permissions keep this user out: run herald as a user allowed to use it "
                    + "(root, or a member of the herald group), or ask an operator to fix the socket's mode",
                exitCode: ExitStatus.notPermitted)
        case .connectionFailed:
            return CommandFailure(
                "\(error); check that \(option) or \(variable) names heraldd's \(socket.name)",
                exitCode: ExitStatus.daemonUnavailable)
        case .disconnected:
            return CommandFailure(
                "\(error) (it stopped, restarted or dropped this client); check its log "
                    + "(journalctl -u heraldd) and try again", exitCode: ExitStatus.daemonUnavailable)
        case .statusTimedOut:
            return CommandFailure(
                "\(error); it may be overloaded or stuck: check journalctl -u heraldd",
                exitCode: ExitStatus.daemonUnavailable)
        case .malformedReply:
            return CommandFailure(
                "\(error); check that the socket belongs to heraldd and that herald and heraldd come "
                    + "from the same release", exitCode: ExitStatus.daemonUnavailable)
        case .unencodableRequest:
            return CommandFailure("\(error); shorten or fix the names and TXT entries", exitCode: ExitStatus.badInput)
        case .systemCall, .closed:
            return CommandFailure("\(error)", exitCode: ExitStatus.daemonUnavailable)
        }
    }

    /// The message and exit status for an error code the daemon answered an operation with.
    static func failure(for status: DNSServiceError, operation: String) -> CommandFailure {
        let code = "\(status.name ?? "Error") \(status.rawValue)"
        switch status {
        case .noAuth:
            return CommandFailure(
                "not permitted (\(code)): the daemon does not allow this user and program to do this; "
                    + "run herald as root or as a member of the herald group (operators are always allowed), "
                    + "or use an app whose manifest declares the service type (herald app add FILE)",
                exitCode: ExitStatus.notPermitted, operation: operation)
        case .badParam, .invalid, .badFlags, .badInterfaceIndex:
            return CommandFailure(
                "the daemon rejected the request (\(code)): \(status.meaning); "
                    + "check the names, type and TXT entries", exitCode: ExitStatus.badInput, operation: operation)
        case .unsupported:
            return CommandFailure(
                "the daemon does not support this request (\(code)); "
                    + "Herald serves only the .local. domain", exitCode: ExitStatus.badInput, operation: operation)
        case .nameConflict:
            return CommandFailure(
                "the name is already taken on the network (\(code)); "
                    + "choose another name, or leave out --no-rename so that Herald picks a free one",
                exitCode: ExitStatus.failure, operation: operation)
        case .noMemory:
            return CommandFailure(
                "the daemon refused the request (\(code)): it has reached its limit "
                    + "of clients or operations; try again later", exitCode: ExitStatus.daemonUnavailable,
                operation: operation)
        case .serviceNotRunning, .defunctConnection:
            return CommandFailure(
                "\(status.meaning) (\(code)); start it with: systemctl start heraldd",
                exitCode: ExitStatus.daemonUnavailable, operation: operation)
        default:
            return CommandFailure(
                "the daemon reported an error (\(code)): \(status.meaning)",
                exitCode: ExitStatus.failure, operation: operation)
        }
    }
}
