/// The packets the kernel rules held back, per app, read from the counters of the rules' listing
/// (`nft list table inet herald`): each app's hold-back rules carry a counter and a comment that starts with its id.
package enum BlockedCounts {
    /// The packets counted on each app's hold-back rules in `listing`, by app id.
    package static func parse(listing: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in listing.split(separator: "\n") where line.contains("jump block comment \"") {
            guard let packets = number(after: "counter packets ", in: line),
                let comment = line.firstRange(of: "comment \"")
            else { continue }
            let id = line[comment.upperBound...].prefix { $0 != " " && $0 != "\"" }
            guard !id.isEmpty else { continue }
            counts[String(id), default: 0] += packets
        }
        return counts
    }

    private static func number(after marker: String, in line: Substring) -> Int? {
        guard let range = line.firstRange(of: marker) else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}
