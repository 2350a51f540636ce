import ArgumentParser
import HeraldControl

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `herald prompt`: answers apps' requests as they arrive, like the permission dialog of a phone.
struct Prompt: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "prompt",
        abstract: "Answer apps' local-network requests interactively as they arrive (operators only).",
        discussion: "Shows each app waiting for a decision (those already pending first), with its usage "
            + "description, and records the answer: a (Allow), d (Don't Allow) or s (decide later). Ends at end of "
            + "input or Ctrl-C.")

    @Flag(name: .long, help: "Stop after the first answer.")
    var once = false

    @OptionGroup var options: ControlOptions

    var label: String { "prompt" }

    func execute() throws {
        let session = try ControlSession(options: options)
        try session.call(.subscribe, topics: ["requests"])
        var asked: Set<String> = []
        // One question per app, however many requests it has pending or makes while the operator thinks.
        var queue: [ControlPendingRequest] = []
        func enqueue(_ request: ControlPendingRequest) {
            let app = request.app.lowercased()
            guard !asked.contains(app), !queue.contains(where: { $0.app.lowercased() == app }) else { return }
            queue.append(request)
        }
        try session.list(.requests, key: { [$0.app, $0.operation, $0.subject] }) { $0.requests }.reversed()
            .forEach(enqueue)
        let input = InputLines()
        if Terminal.standardOutputIsTerminal && !options.json && queue.isEmpty {
            StandardOutput.line("waiting for requests (Ctrl-C to stop)…")
        }
        while Interruption.signal == nil {
            if queue.isEmpty {
                // Nothing to ask: the end of input ends the prompt here too, not only at the next question.
                if input.hasEnded { return }
                guard let event = try session.nextEvent() else { continue }
                if let request = event.request { enqueue(request) }
                continue
            }
            let request = queue.removeFirst()
            guard !asked.contains(request.app.lowercased()) else { continue }
            asked.insert(request.app.lowercased())
            // The app may have been decided by another operator meanwhile.
            guard let app = try? session.call(.appShow, app: request.app).app, app.decision == "not-determined" else {
                continue
            }
            show(request)
            guard let answer = readAnswer(from: input) else { return }
            switch answer {
            case .allow:
                let reply = try session.call(.grant, app: request.app)
                report(request.app, answer: "allow", change: reply.change ?? "granted")
            case .deny:
                let reply = try session.call(.deny, app: request.app)
                report(request.app, answer: "deny", change: reply.change ?? "denied")
            case .later:
                asked.remove(request.app.lowercased())
                report(request.app, answer: "later", change: "left undecided")
            }
            if once { return }
        }
    }

    private func show(_ request: ControlPendingRequest) {
        if options.json {
            ControlOutput.json(request)
            return
        }
        StandardOutput.line("")
        StandardOutput.line(
            "\(ControlOutput.quoted(request.appName)) would like to find and connect to devices on your local network.")
        for line in request.usageDescription.split(separator: "\n", omittingEmptySubsequences: false) {
            StandardOutput.line("  \(line)")
        }
        let times =
            "\(request.count) time\(request.count == 1 ? "" : "s"), last at \(ControlOutput.time(request.lastSeen))"
        if let latest = request.latestSubject {
            // An app's address lookups, folded into one request.
            StandardOutput.line(
                "  app \(request.app) asked to look up addresses on the local network (\(times), "
                    + "latest \(latest))")
        } else {
            StandardOutput.line("  app \(request.app) asked to \(request.operation) \(request.subject) (\(times))")
        }
    }

    /// What became of an answered request: a line for people, or with --json an object (`app`, `answer`: allow,
    /// deny or later, `change`).
    private func report(_ app: String, answer: String, change: String) {
        if options.json {
            ControlOutput.json(PromptAnswerJSON(app: app, answer: answer, change: change))
        } else {
            StandardOutput.line("\(app): \(change)")
        }
    }

    private enum Answer { case allow, deny, later }

    /// Asks until the answer is one of the choices; nil at end of input. With --json the question goes to standard
    /// error, so that standard output holds only JSON lines.
    private func readAnswer(from input: InputLines) -> Answer? {
        let ask: Int32 = options.json ? 2 : 1
        while true {
            writeAll("[a] Allow   [d] Don't Allow   [s] decide later: ", to: ask)
            guard let line = input.next() else {
                writeAll("\n", to: ask)
                return nil
            }
            switch line.trimmed.lowercased() {
            case "a", "allow", "y", "yes": return .allow
            case "d", "don't allow", "dont allow", "deny", "n", "no": return .deny
            case "s", "skip", "later", "": return .later
            default: writeAll("please answer a, d or s\n", to: ask)
            }
        }
    }
}

/// `herald prompt --json`: one answered request.
private struct PromptAnswerJSON: Encodable {
    var app: String
    var answer: String
    var change: String
}

extension String {
    /// Without the spaces and tabs around it.
    fileprivate var trimmed: Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
