import HeraldWire

extension RecordKey {
    /// The order in which the querier lists the questions due at one instant: by name in wire order, then type,
    /// then class. Any fixed order keeps a run on a seed reproducible; this one makes no text.
    static func queryOrder(_ a: RecordKey, _ b: RecordKey) -> Bool {
        if a.name.precedesInWireOrder(b.name) { return true }
        if b.name.precedesInWireOrder(a.name) { return false }
        if a.type != b.type { return a.type.rawValue < b.type.rawValue }
        return a.recordClass.rawValue < b.recordClass.rawValue
    }
}
