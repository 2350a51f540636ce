import ArgumentParser
import HeraldControl

/// `herald requests`: what apps asked for while not yet decided.
struct Requests: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "requests",
        abstract: "List pending requests: apps waiting for a decision, with their usage descriptions (operators only).")

    @OptionGroup var options: ControlOptions

    var label: String { "requests" }

    func execute() throws {
        let requests = try ControlSession(options: options).list(
            .requests, key: { [$0.app, $0.operation, $0.subject] }
        ) {
            $0.requests
        }
        if options.json {
            requests.forEach { ControlOutput.json($0) }
            return
        }
        if requests.isEmpty {
            if Terminal.standardOutputIsTerminal { StandardOutput.line("no pending requests") }
            return
        }
        var table = Table(titles: ["LAST SEEN", "APP", "OPERATION", "SUBJECT", "COUNT", "NAME", "USAGE DESCRIPTION"])
        for request in requests {
            table.append([
                ControlOutput.time(request.lastSeen), request.app, request.operation, ControlOutput.subject(request),
                String(request.count), ControlOutput.quoted(request.appName), request.usageDescription,
            ])
        }
        table.print()
    }
}
