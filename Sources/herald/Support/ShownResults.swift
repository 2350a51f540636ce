/// The browse results a command has shown as present, in the order they appeared, so that it can show
/// them removed when the daemon stops the browse (its permission was taken back).
struct ShownResults {
    private var order: [BrowseReplyFields] = []
    private var present: Set<BrowseReplyFields> = []

    /// Notes an add or a remove as shown.
    mutating func note(_ fields: BrowseReplyFields, added: Bool) {
        if added {
            if present.insert(fields).inserted { order.append(fields) }
        } else if present.remove(fields) != nil {
            order.removeAll { $0 == fields }
        }
    }

    /// Everything shown as present, oldest first; afterwards nothing is.
    mutating func removeAll() -> [BrowseReplyFields] {
        defer {
            order.removeAll()
            present.removeAll()
        }
        return order
    }
}
