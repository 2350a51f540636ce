import ArgumentParser

/// The `herald` command: discover, resolve and advertise services, and manage app permissions.
@main
struct Herald: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Multicast DNS service discovery with per-app local-network permissions.",
        discussion: """
            herald talks to the heraldd daemon over its app socket ($DNSSD_UDS_PATH, else \
            /run/herald/dnssd.sock; --socket PATH overrides both). Output is aligned text for people, in the \
            +/- grammar of dns-sd and avahi-browse, without colour when not on a terminal; --json prints one \
            object per line.

            Exit status: 0 success, 1 nothing found in time (resolve, lookup, query) or the operation \
            failed, 64 usage error, 65 bad input, 69 daemon not running, 77 not permitted.
            """,
        subcommands: [Browse.self, Resolve.self, Lookup.self, Query.self, Register.self, Inspect.self]
    )
}
