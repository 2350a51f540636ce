import ArgumentParser
import HeraldControl

/// `herald grant`, `deny` and `reset`: an app's decision, which takes effect at once on its running apps.
struct Grant: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Allow an app on the local network (operators only).",
        discussion: "Its parked operations start at once, without the app doing anything.")

    @Argument(help: ArgumentHelp("The app's id (herald requests and herald app list show them).", valueName: "id"))
    var id: String

    @OptionGroup var options: ControlOptions

    var label: String { "grant \(id)" }

    func execute() throws { try decide(.grant, app: id, options: options) }
}

struct Deny: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny",
        abstract: "Refuse an app the local network (operators only).",
        discussion: "Its browses and queries get NoAuth and stop; its advertised services are withdrawn with goodbyes.")

    @Argument(help: ArgumentHelp("The app's id.", valueName: "id"))
    var id: String

    @OptionGroup var options: ControlOptions

    var label: String { "deny \(id)" }

    func execute() throws { try decide(.deny, app: id, options: options) }
}

struct Reset: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Return an app to not-determined (operators only): its next request waits for a decision again.")

    @Argument(help: ArgumentHelp("The app's id.", valueName: "id"))
    var id: String

    @OptionGroup var options: ControlOptions

    var label: String { "reset \(id)" }

    func execute() throws { try decide(.reset, app: id, options: options) }
}

/// Sends a decision and prints what changed.
private func decide(_ command: ControlRequest.Command, app: String, options: ControlOptions) throws {
    let reply = try ControlSession(options: options).call(command, app: app)
    if options.json {
        ControlOutput.json(reply)
    } else {
        StandardOutput.line("\(reply.app?.id ?? app): \(reply.change ?? command.rawValue)")
    }
}
