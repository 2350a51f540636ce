import CHeraldSystem

/// nftables through libnftables (loaded on first use): runs commands in nft's language, each buffer one transaction.
enum NFTables {
    /// Runs `commands` and returns what nft printed; throws with nft's message when it refused them.
    @discardableResult
    static func run(_ commands: String) throws(EnforcementError) -> String {
        var output = [CChar](repeating: 0, count: 1 << 20)
        var error = [CChar](repeating: 0, count: 16_384)
        let status = herald_nft_run(commands, &output, output.count, &error, error.count)
        let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch status {
        case 0:
            return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        case -1:
            throw .unavailable(message)
        default:
            if message.contains("Operation not permitted") {
                throw .unavailable(
                    "changing the kernel's packet filter needs CAP_NET_ADMIN: install systemd/heraldd-enforcement.conf "
                        + "as a drop-in of heraldd.service (docs/enforcement.md)")
            }
            throw .refused(message.trimmingWhitespaceAndNewlines())
        }
    }
}

extension String {
    fileprivate func trimmingWhitespaceAndNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        return String(text)
    }
}
