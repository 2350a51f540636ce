extension DNSName {
    /// A total order on names, equal names (ignoring ASCII case) being neither before the other: the wire bytes
    /// with letters lowered, compared byte by byte, a name that is a prefix of the other first. Not the canonical
    /// order of RFC 4034 (see `<`), but cheap: for sorting many names where any fixed order will do.
    public func precedesInWireOrder(_ other: DNSName) -> Bool {
        withWire { mine in
            other.withWire { theirs in
                for (a, b) in zip(mine, theirs) {
                    let (lowerA, lowerB) = (ASCIICase.lower(a), ASCIICase.lower(b))
                    if lowerA != lowerB { return lowerA < lowerB }
                }
                return mine.count < theirs.count
            }
        }
    }
}
