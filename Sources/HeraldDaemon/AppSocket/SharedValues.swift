/// Hands out one copy of equal values, so that the many operations asking for the same thing (a thousand
/// clients browsing one type) share its storage: an event for all of them then touches one copy, and comparing
/// two of them is a pointer comparison. Only an optimisation: past `limit` distinct values it starts afresh,
/// so clients asking for ever-new values cannot make it grow.
struct SharedValues<Value: Hashable> {
    private var values: [Value: Value] = [:]
    let limit: Int

    init(limit: Int = 1024) {
        self.limit = limit
    }

    /// How many distinct values it holds.
    var count: Int { values.count }

    /// The copy already handed out for values equal to `value`, or `value` itself from now on.
    mutating func shared(_ value: Value) -> Value {
        if let existing = values[value] { return existing }
        if values.count >= limit { values.removeAll() }
        values[value] = value
        return value
    }
}
