import ArgumentParser

/// The `herald` command: discover, resolve and advertise services, and manage app permissions.
@main
struct Herald: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Multicast DNS service discovery with per-app local-network permissions.",
        discussion: """
            herald talks to the heraldd daemon over its sockets. Exit status: 0 success, 77 not permitted,
            69 daemon not running, 64 usage error, 65 bad input file.
            """,
        subcommands: [Inspect.self]
    )
}
