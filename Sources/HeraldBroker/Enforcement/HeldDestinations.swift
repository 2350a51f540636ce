/// Where an app's held-back packets went, read from its sets of destinations (`nft list set inet herald heldN_4`),
/// whose elements each expire ``EnforcementRuleset/destinationTimeout`` after their latest packet.
package enum HeldDestinations {
    /// The destination of the latest packet in a set's listing (the element that expires last), with the
    /// milliseconds it has left; nil when the set is empty.
    package static func latest(inListing listing: String) -> (address: String, expiresIn: Int)? {
        guard let open = listing.firstRange(of: "elements = {") else { return nil }
        let rest = listing[open.upperBound...]
        let body = rest.prefix { $0 != "}" }
        var best: (address: String, expiresIn: Int)?
        for element in body.split(separator: ",") {
            let words = element.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
            guard let address = words.first, let at = words.firstIndex(of: "expires"), at + 1 < words.endIndex,
                let left = milliseconds(words[at + 1])
            else { continue }
            if best.map({ left > $0.expiresIn }) ?? true { best = (String(address), left) }
        }
        return best
    }

    /// `9m59s992ms`, `1h2m`, `30s` in milliseconds.
    static func milliseconds(_ text: Substring) -> Int? {
        var total = 0
        var number = 0
        var sawDigit = false
        var rest = text[...]
        while let character = rest.first {
            if let digit = character.wholeNumberValue {
                number = number * 10 + digit
                sawDigit = true
                rest = rest.dropFirst()
                continue
            }
            guard sawDigit else { return nil }
            let unit: Int
            if rest.hasPrefix("ms") {
                unit = 1
                rest = rest.dropFirst(2)
            } else {
                switch character {
                case "d": unit = 86_400_000
                case "h": unit = 3_600_000
                case "m": unit = 60_000
                case "s": unit = 1000
                default: return nil
                }
                rest = rest.dropFirst()
            }
            total += number * unit
            (number, sawDigit) = (0, false)
        }
        return sawDigit ? nil : total
    }
}
