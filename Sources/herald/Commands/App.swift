import ArgumentParser
import HeraldControl
import HeraldFiles

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `herald app`: register, remove, list and show app manifests (operators only).
struct App: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Register, remove, list and show app manifests (operators only).",
        subcommands: [Add.self, Remove.self, List.self, Show.self])

    struct Add: HeraldCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register an app's manifest (JSON or XML property list), or replace it.",
            discussion: "A changed manifest keeps the app's decision. A manifest that does not validate is refused "
                + "with every problem listed, and nothing is stored (exit 65).")

        @Argument(help: ArgumentHelp("The manifest file.", valueName: "file"))
        var file: String

        @OptionGroup var options: ControlOptions

        var label: String { "app add \(file)" }

        func execute() throws {
            let text: String
            var info = stat()
            guard stat(file, &info) == 0 else {
                let failure = errno
                if failure == ENOENT || failure == ENOTDIR {
                    throw CommandFailure(
                        "no such file; give the path of the app's manifest (JSON or property list)",
                        exitCode: ExitStatus.badInput)
                }
                throw CommandFailure(
                    "cannot read the file: \(String(cString: strerror(failure))); run herald as a user "
                        + "who may read it (an operator usually is root)", exitCode: ExitStatus.badInput)
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                throw CommandFailure(
                    "this is a directory; give the manifest file in it (for example \(file)/app.json)",
                    exitCode: ExitStatus.badInput)
            }
            let data: [UInt8]
            switch FileContents.read(file) {
            case .success(let bytes): data = bytes
            case .failure(let failure):
                throw CommandFailure("cannot read the file: \(failure)", exitCode: ExitStatus.badInput)
            }
            guard let decoded = String(validating: data, as: UTF8.self) else {
                throw CommandFailure(
                    "the file is not UTF-8 text; save the manifest as UTF-8 JSON or XML",
                    exitCode: ExitStatus.badInput)
            }
            text = decoded
            let reply = try ControlSession(options: options).call(
                .appAdd, manifest: text, fileName: file.split(separator: "/").last.map(String.init) ?? file)
            if options.json {
                ControlOutput.json(reply)
                return
            }
            for warning in reply.warnings ?? [] { printError("herald: \(label): warning: \(warning)") }
            if let app = reply.app {
                StandardOutput.line("\(app.id): \(reply.change ?? "registered") (decision: \(app.decision))")
            }
        }
    }

    struct Remove: HeraldCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove an app with its decision and pending requests.")

        @Argument(help: ArgumentHelp("The app's id.", valueName: "id"))
        var id: String

        @OptionGroup var options: ControlOptions

        var label: String { "app remove \(id)" }

        func execute() throws {
            let reply = try ControlSession(options: options).call(.appRemove, app: id)
            if options.json { ControlOutput.json(reply) } else { StandardOutput.line("\(id): removed") }
        }
    }

    struct List: HeraldCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the registered apps and their decisions.")

        @OptionGroup var options: ControlOptions

        var label: String { "app list" }

        func execute() throws {
            let apps = try ControlSession(options: options).list(.appList, key: \.id) { $0.apps }
            if options.json {
                apps.forEach { ControlOutput.json($0) }
                return
            }
            var table = Table(titles: ["ID", "DECISION", "PENDING", "TYPES", "NAME"])
            for app in apps {
                table.append([
                    app.id, app.decision, String(app.pendingRequests),
                    app.serviceTypes.joined(separator: ",").ifEmpty("-"), ControlOutput.quoted(app.name),
                ])
            }
            table.print()
        }
    }

    struct Show: HeraldCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show one app: manifest, decision, pending requests.")

        @Argument(help: ArgumentHelp("The app's id.", valueName: "id"))
        var id: String

        @OptionGroup var options: ControlOptions

        var label: String { "app show \(id)" }

        func execute() throws {
            guard let app = try ControlSession(options: options).call(.appShow, app: id).app else { return }
            if options.json {
                ControlOutput.json(app)
            } else {
                ControlOutput.describe(app).forEach(StandardOutput.line)
            }
        }
    }
}

extension String {
    /// `replacement` when the string is empty.
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
