import ArgumentParser
import CHeraldSystem

/// A failure to report as `herald: <operation>: <problem>; <fix>` on standard error, ending the command
/// with a meaningful exit status.
struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong and how to fix it, without the `herald: <operation>:` prefix.
    var message: String
    var exitCode: ExitCode
    /// The operation the message is about, when it is not the command itself (`resolve "Printer" _ipp._tcp`
    /// started by `browse --resolve`).
    var operation: String?

    init(_ message: String, exitCode: ExitCode, operation: String? = nil) {
        self.message = message
        self.exitCode = exitCode
        self.operation = operation
    }

    var description: String { message }
}

/// A `herald` subcommand that talks to the daemon: `execute()` does the work, and failures are printed
/// with the command's label and turned into its exit status.
protocol HeraldCommand: ParsableCommand {
    /// How messages name the command: `browse _http._tcp`.
    var label: String { get }
    func execute() throws
}

extension HeraldCommand {
    mutating func run() throws {
        // The code and data that loading the program and parsing its command line touched, the shared libraries'
        // symbol tables among them, are not what a command that runs for hours needs: unmapped here, what the
        // command uses comes back a page at a time (see CHeraldEarly).
        _ = herald_release_file_pages()
        Interruption.install()
        do {
            try execute()
        } catch let failure as CommandFailure {
            printError("herald: \(failure.operation ?? label): \(failure.message)")
            throw failure.exitCode
        }
    }
}
