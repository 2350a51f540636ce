/// Finds a value that starts with '-' where an option is expected. The argument parser reads `-dash2` as the short
/// options -d -a -s -h -2, and so printed the help and exited 0 for `herald register -dash2 _http._tcp 80`,
/// registering nothing. herald's only short options are -h, and -f and -n of `herald log`.
enum DashedValue {
    /// The letters herald accepts as short options, alone or bundled.
    static let shortOptions: Set<Character> = ["h", "f", "n"]

    /// The first argument before `--` that starts with a single '-' and is not made of herald's short options
    /// (`-n` may carry its number joined: `-n20`); nil when there is none.
    static func first(in arguments: [String]) -> String? {
        for argument in arguments {
            if argument == "--" { return nil }
            guard argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.count > 1 else { continue }
            var letters = Substring(argument.dropFirst())
            if let n = letters.firstIndex(of: "n"), letters[letters.index(after: n)...].allSatisfy(\.isNumber) {
                letters = letters[..<n]
            }
            if !letters.allSatisfy(shortOptions.contains) { return argument }
        }
        return nil
    }

    /// The message for `argument`: what it is not, and how to pass it as a value.
    static func message(for argument: String) -> String {
        let message =
            "'\(argument)' is not an option. A name or value that starts with '-' goes after '--' (options before it), "
            + "as in: herald register --json -- '\(argument)' _http._tcp 8080"
        // -1 may be a name, or a mistaken count or time.
        return Double(argument) == nil
            ? message : message + ". Counts, ports and times (--timeout, -n) cannot be negative"
    }
}
