import ArgumentParser
import CHeraldSystem

/// The `herald` command: discover, resolve and advertise services, and manage app permissions.
@main
struct Herald: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Multicast DNS service discovery with per-app local-network permissions.",
        discussion: """
            herald talks to the heraldd daemon over its app socket ($DNSSD_UDS_PATH, else \
            /run/herald/dnssd.sock; --socket PATH overrides both). The operator commands (app, grant, deny, \
            reset, requests, prompt, log, status) use the control socket ($HERALD_CONTROL_SOCKET, else \
            /run/herald/control.sock; --control-socket PATH) and are for root and the herald group. Output is aligned text for people, in the \
            +/- grammar of dns-sd and avahi-browse, without colour when not on a terminal; --json prints one \
            object per line.

            Exit status: 0 success, 1 nothing found in time (resolve, lookup, query) or the operation \
            failed, 64 usage error, 65 bad input, 69 daemon not running, not answering within --timeout, or unable to serve (its permission store failed), 77 not permitted.
            """,
        subcommands: [
            Browse.self, Resolve.self, Lookup.self, Query.self, Register.self, Inspect.self, App.self, Grant.self,
            Deny.self, Reset.self, Requests.self, Prompt.self, Log.self, Status.self,
        ]
    )

    /// Refuses a value that starts with '-' before the argument parser can take it for options (see ``DashedValue``).
    static func main() {
        // What loading the program touched (the shared libraries' symbol tables, relocated data) is not what parsing
        // the command line needs: unmapped here, before the parse maps what it reads a page at a time (CHeraldEarly).
        _ = herald_release_file_pages()
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let dashed = DashedValue.first(in: arguments) {
            printError("Error: \(DashedValue.message(for: dashed))")
            exit(withError: ExitStatus.usage)
        }
        main(arguments)
    }
}
