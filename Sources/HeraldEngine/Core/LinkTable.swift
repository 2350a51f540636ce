/// A value per link in use (a link's record cache, its questions), read and changed where it lies.
///
/// A host has a handful of links (an interface and a family each), so they sit in two small arrays searched in
/// order rather than in a hash table. And unlike a `Dictionary`, whose getter hands out a copy, the subscript reads
/// and changes the stored value in place: read through a dictionary, each of thousands of lookups a second copied a
/// cache's or a question table's references out and released them again.
package struct LinkTable<Value: Sendable>: Sendable, ExpressibleByDictionaryLiteral {
    private var links: [LinkID] = []
    /// The values, each at its link's position. Never nil at rest: optional so that the subscript can lend the slot
    /// itself, for reading and for changing.
    private var slots: [Value?] = []

    package init() {}

    package init(dictionaryLiteral elements: (LinkID, Value)...) {
        for (link, value) in elements { self[link] = value }
    }

    /// The value of `link`, nil when the link has none; setting nil removes it.
    package subscript(link: LinkID) -> Value? {
        _read {
            if let position = links.firstIndex(of: link) { yield slots[position] } else { yield nil }
        }
        _modify {
            if let position = links.firstIndex(of: link) {
                yield &slots[position]
                if slots[position] == nil {
                    links.remove(at: position)
                    slots.remove(at: position)
                }
            } else {
                var added: Value?
                yield &added
                if let added {
                    links.append(link)
                    slots.append(added)
                }
            }
        }
    }

    /// The value of `link`, made from `value` when the link has none yet.
    package subscript(link: LinkID, default value: @autoclosure () -> Value) -> Value {
        _read {
            if let position = links.firstIndex(of: link) { yield slots[position]! } else { yield value() }
        }
        _modify {
            if links.firstIndex(of: link) == nil {
                links.append(link)
                slots.append(value())
            }
            let position = links.firstIndex(of: link)!
            yield &slots[position]!
        }
    }

    /// The links that have a value, in the order they got it.
    package var keys: [LinkID] { links }

    /// Every value, in the order of ``keys``.
    package var values: LazyMapSequence<[Value?], Value> { slots.lazy.map { $0! } }
}
