import ArgumentParser

/// How to reach the daemon: shared by every command that talks to it.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's app socket. Default: $DNSSD_UDS_PATH when set, else /run/herald/dnssd.sock.",
            valueName: "path"))
    var socket: String?
}

/// Checks a `--timeout` value, with a message that says what is allowed.
func validateTimeout(_ timeout: Double?) throws {
    if let timeout, !(timeout > 0 && timeout.isFinite) {
        throw ValidationError("--timeout must be a number of seconds above 0, such as 5 or 0.5 (got \(timeout))")
    }
    // Far beyond any wait a person means, and still a whole number of milliseconds a clock can add.
    if let timeout, timeout > 31_536_000 {
        throw ValidationError("--timeout must be at most 31536000 seconds (a year) (got \(timeout))")
    }
}
