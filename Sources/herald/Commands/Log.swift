import ArgumentParser
import HeraldControl

/// `herald log`: the audit trail of decisions and operator actions.
struct Log: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the audit trail: every decision with its reason, and every operator action (operators only).")

    @Flag(name: .shortAndLong, help: "Keep printing new lines as they are recorded.")
    var follow = false

    @Option(
        name: [.customShort("n"), .long],
        help: ArgumentHelp("How many recent lines to show first (as tail -n).", valueName: "n"))
    var lines = 50

    @OptionGroup var options: ControlOptions

    var label: String { "log" }

    func validate() throws {
        guard (1...10_000).contains(lines) else { throw ValidationError("--lines must be from 1 to 10000") }
    }

    func execute() throws {
        let session = try ControlSession(options: options)
        // Page by page: a reply holds at most half a control line, however long the lines are.
        let last = try session.log(newest: lines) { $0.forEach(print) }
        guard follow else { return }
        try session.call(.subscribe, after: last, topics: ["log"])
        while Interruption.signal == nil {
            guard let event = try session.nextEvent() else { continue }
            (event.log ?? []).forEach(print)
        }
    }

    private func print(_ line: ControlAuditLine) {
        if options.json {
            ControlOutput.json(line)
            return
        }
        let app = line.app ?? "-"
        let type = line.serviceType.map { " \($0)" } ?? ""
        let count = line.count.map { " ×\($0)" } ?? ""
        StandardOutput.line(
            "\(ControlOutput.time(line.time))  \(app)  \(line.operation)\(type)\(count)  "
                + "\(line.decision) (\(line.reason))  \(line.detail)")
    }
}
