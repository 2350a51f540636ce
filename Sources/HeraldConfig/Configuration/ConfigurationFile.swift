/// The text form of heraldd's configuration file: INI-style `[section]` headers and `key = value` lines;
/// `#` and `;` start comments; blank values mean "the default".
package struct ConfigurationFile: Sendable {
    /// One `key = value` line, with where it was found.
    package struct Entry: Sendable, Hashable {
        package var section: String
        package var key: String
        package var value: String
        package var line: Int
    }

    package private(set) var entries: [Entry] = []

    /// A problem with the file, naming the line and what to do.
    package struct Problem: Error, CustomStringConvertible, Sendable, Hashable {
        package var line: Int
        package var message: String
        package var description: String { "line \(line): \(message)" }
    }

    /// Parses the text, collecting every problem rather than stopping at the first.
    package init(parsing text: String) throws(ProblemList) {
        var section = ""
        var problems: [Problem] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            var line = Substring(rawLine)
            if let comment = line.firstIndex(where: { $0 == "#" || $0 == ";" }) { line = line[..<comment] }
            let trimmed = line.trimmingCharacters(in: " \t\r")
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]"), trimmed.count > 2 else {
                    problems.append(Problem(line: lineNumber, message: "a section header looks like [network]"))
                    continue
                }
                section = String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: " \t").lowercased()
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                problems.append(Problem(line: lineNumber, message: "expected 'key = value', found '\(trimmed)'"))
                continue
            }
            let key = String(trimmed[..<equals]).trimmingCharacters(in: " \t").lowercased()
            let value = String(trimmed[trimmed.index(after: equals)...]).trimmingCharacters(in: " \t")
            guard !key.isEmpty else {
                problems.append(Problem(line: lineNumber, message: "a setting needs a name before '='"))
                continue
            }
            guard !section.isEmpty else {
                problems.append(
                    Problem(line: lineNumber, message: "'\(key)' must be inside a section such as [network]"))
                continue
            }
            entries.append(Entry(section: section, key: key, value: value, line: lineNumber))
        }
        if !problems.isEmpty { throw ProblemList(problems: problems) }
    }

    /// Every problem found in a configuration file.
    package struct ProblemList: Error, CustomStringConvertible, Sendable {
        package var problems: [Problem]
        package var description: String { problems.map(\.description).joined(separator: "\n") }
    }
}

extension StringProtocol {
    /// The string without leading and trailing characters from `set`.
    func trimmingCharacters(in set: String) -> String {
        var start = startIndex
        var end = endIndex
        while start < end, set.contains(self[start]) { start = index(after: start) }
        while end > start, set.contains(self[index(before: end)]) { end = index(before: end) }
        return String(self[start..<end])
    }
}
