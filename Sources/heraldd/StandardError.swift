import HeraldDaemon

/// Writes a message to standard error, ending its line; a message may span lines, and any other control character
/// in it is shown as a visible escape (``EscapingLogStream``).
func printError(_ text: String) {
    var stream = EscapingLogStream.standardError
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) { stream.write(line + "\n") }
}
