/// The engine's only source of randomness: a seeded SplitMix64 generator. The same seed gives the same
/// delays, so a failing scenario can be replayed exactly; the daemon seeds it from the system.
package struct EngineRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed whole number of milliseconds in `range`.
    package mutating func milliseconds(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }
}
