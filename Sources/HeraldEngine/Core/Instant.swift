/// A point on the engine's clock, in milliseconds since an arbitrary origin chosen by whoever drives the
/// engine (the daemon uses a monotonic clock; tests use a virtual one that starts at zero).
package struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var milliseconds: Int64

    package init(milliseconds: Int64) { self.milliseconds = milliseconds }

    package static let zero = Instant(milliseconds: 0)

    package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// This instant moved by `milliseconds` (which may be negative).
    package func adding(_ milliseconds: Int) -> Instant {
        Instant(milliseconds: self.milliseconds + Int64(milliseconds))
    }

    package static func + (lhs: Instant, rhs: Int) -> Instant { lhs.adding(rhs) }
    package static func - (lhs: Instant, rhs: Int) -> Instant { lhs.adding(-rhs) }

    /// Milliseconds from `other` to `self`.
    package static func - (lhs: Instant, rhs: Instant) -> Int { Int(lhs.milliseconds - rhs.milliseconds) }

    package var description: String { "t=\(milliseconds)ms" }
}
