/// A value for each of an operation's links, kept as a short array: an operation has one or two links (an interface's
/// IPv4 and IPv6), and a dictionary for so few costs several times the memory (2,000 resolves hold two of these each).
struct PerLink<Value: Sendable>: Sendable, Sequence {
    private var entries: [(link: LinkID, value: Value)] = []

    subscript(link: LinkID) -> Value? {
        get { entries.first { $0.link == link }?.value }
        set {
            let index = entries.firstIndex { $0.link == link }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((link, value))
            case (nil, nil): break
            }
        }
    }

    subscript(link: LinkID, default value: @autoclosure () -> Value) -> Value {
        get { self[link] ?? value() }
        set { self[link] = newValue }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// The links and their values, in the order the links were added.
    func makeIterator() -> IndexingIterator<[(link: LinkID, value: Value)]> { entries.makeIterator() }
}
