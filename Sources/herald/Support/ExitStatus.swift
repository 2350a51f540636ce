import ArgumentParser

/// The exit statuses of `herald` (docs/command-line.md, "Exit status"), from sysexits.h where one fits.
enum ExitStatus {
    /// Done as asked (a browse whose `--timeout` ended included).
    static let success = ExitCode(0)
    /// The operation ran but failed: nothing answered before `--timeout`, or the name was taken with
    /// `--no-rename`, or the daemon reported an unexpected error.
    static let failure = ExitCode(1)
    /// EX_USAGE: the command line is wrong (argument parser validation uses it too).
    static let usage = ExitCode(64)
    /// EX_DATAERR: the input is wrong (a file, or a name or record the daemon refuses).
    static let badInput = ExitCode(65)
    /// EX_UNAVAILABLE: the daemon is not running or stopped answering.
    static let daemonUnavailable = ExitCode(69)
    /// EX_NOPERM: not permitted (NoAuth, or not an operator).
    static let notPermitted = ExitCode(77)
}
