import HeraldControl

/// Writes one message to standard error, ending its line. A message may span lines; any other control character
/// in it (from a name, a path or the daemon's words about them) is shown as a visible escape (``OperatorText``).
func printError(_ text: String) {
    writeAll(OperatorText.escapedKeepingLines(text) + "\n", to: 2)
}
