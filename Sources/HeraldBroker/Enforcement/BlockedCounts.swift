/// The packets the kernel rules held back, per app, read from the table's counters
/// (`nft list counters table inet herald`): each app held back has a counter whose comment is its id.
package enum BlockedCounts {
    /// The packets of each counter in `listing`, by the app id of its comment.
    package static func parse(listing: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        var app: String?
        for raw in listing.split(separator: "\n") {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("counter ") && line.hasSuffix("{") {
                app = nil
            } else if line.hasPrefix("comment \""), line.hasSuffix("\"") {
                app = String(line.dropFirst("comment \"".count).dropLast())
            } else if line.hasPrefix("packets "), let id = app,
                let packets = Int(line.dropFirst("packets ".count).prefix { $0.isNumber })
            {
                counts[id, default: 0] += packets
                app = nil
            }
        }
        return counts
    }
}
