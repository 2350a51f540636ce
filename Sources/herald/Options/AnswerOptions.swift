import ArgumentParser

/// The options of the commands that ask once and print the answers (resolve, lookup, query).
struct AnswerOptions: ParsableArguments {
    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Option(help: ArgumentHelp("Give up after this many seconds without an answer.", valueName: "seconds"))
    var timeout: Double = 5

    @Flag(
        name: .customLong("no-wait"),
        help: "Exit 77 at once instead of waiting when the daemon holds the request for permission.")
    var noWait = false

    func validate() throws {
        try validateTimeout(timeout)
    }
}
