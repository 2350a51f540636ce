import ArgumentParser
import HeraldClient
import HeraldIPC
import HeraldWire

/// `herald resolve NAME TYPE`: one instance's host, port, addresses and TXT record.
struct Resolve: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Show the host, port, addresses and TXT record of one service instance.",
        discussion: """
            Waits for the instance to answer (at most --timeout seconds), then for the addresses of its host, \
            prints what it found on every interface (identical answers from several interfaces once) and \
            exits 0. Exits 1 when nothing answers in time. TXT entries are shown as key=value, a backslash \
            as \\\\ and non-printable bytes as \\xHH (as herald register reads them), in single quotes when \
            they hold a space or a shell metacharacter, so that the line pastes back into herald register; \
            --json gives each string and the exact bytes (txtHex).

            Examples:
              herald resolve "Living Room Printer" _ipp._tcp
              herald resolve 'My Service' _http._tcp --json
            """)

    @Argument(
        help: ArgumentHelp("The instance name as browse shows it, such as \"Living Room Printer\".", valueName: "name"))
    var name: String

    @Argument(help: ArgumentHelp("The service type, such as _ipp._tcp.", valueName: "type"))
    var type: String

    @OptionGroup var answers: AnswerOptions

    @OptionGroup var connection: ConnectionOptions

    var label: String { "resolve \"\(name)\" \(type)" }

    func validate() throws {
        let parsed: ServiceType
        do {
            parsed = try ServiceType(type)
        } catch {
            throw ValidationError("\(error). Types look like _http._tcp")
        }
        guard !parsed.hasSubtype else {
            throw ValidationError("'\(type)' is a subtype; resolve the instance with its type (\(parsed.baseType))")
        }
        do {
            _ = try ServiceInstanceName(instance: name, type: parsed)
        } catch {
            throw ValidationError("'\(name)' is not an instance name: \(error)")
        }
    }

    func execute() throws {
        let type = try ServiceType(self.type)
        let session = try DaemonSession(
            socketPath: connection.socket, label: label, noWait: answers.noWait, timeout: answers.timeout)
        let tracker = ResolutionTracker(session: session, settleTime: .milliseconds(200))
        try tracker.resolve(ResolutionTracker.Instance(name: name, type: type.description + ".", domain: "local."))
        var window = AnswerWindow(timeout: answers.timeout)
        while !window.isOver {
            if let received = try session.next(until: window.endsAt) {
                if try tracker.handle(received) {
                    if ResolutionTracker.isFailure(received) {
                        throw DaemonSession.failure(for: received.reply.error, operation: label)
                    }
                    window.answered()
                }
            }
            if session.wasInterrupted { break }
        }
        session.close()
        let results = tracker.all
        if results.isEmpty {
            try session.requirePermission(waited: session.wasInterrupted ? nil : answers.timeout)
            throw CommandFailure(
                "no answer within \(DaemonSession.seconds(answers.timeout)); check the name and type with: "
                    + "herald browse \(type) (or wait longer with --timeout)", exitCode: ExitStatus.failure)
        }
        show(results)
    }

    private func show(_ results: [ServiceResolution]) {
        let time = Timestamp()
        if answers.json {
            for result in results { JSONLine.print(ResolutionJSON(result, time: time)) }
            return
        }
        // Identical answers on several interfaces are shown once, with every interface.
        var groups: [(ServiceResolution, [UInt32])] = []
        for result in results {
            if let index = groups.firstIndex(where: { $0.0.hasSameAnswer(as: result) }) {
                groups[index].1.append(result.interfaceIndex)
            } else {
                groups.append((result, [result.interfaceIndex]))
            }
        }
        for (number, (result, interfaces)) in groups.enumerated() {
            if number > 0 { StandardOutput.line("") }
            StandardOutput.line(result.fullName)
            let lines =
                [("interface", interfaces.map(InterfaceNames.name(of:)).joined(separator: ", "))]
                + ResolutionText.details(result)
            for (label, value) in lines {
                StandardOutput.line("  " + label.padding(ResolutionText.labelWidth) + "  " + value)
            }
        }
    }
}
