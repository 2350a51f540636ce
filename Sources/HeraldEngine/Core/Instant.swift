/// A point on the engine's clock, in milliseconds since an arbitrary origin chosen by whoever drives the
/// engine (the daemon uses a monotonic clock; tests use a virtual one that starts at zero).
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static let zero = Instant(milliseconds: 0)

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// This instant moved by `milliseconds` (which may be negative).
    public func adding(_ milliseconds: Int) -> Instant { Instant(milliseconds: self.milliseconds + Int64(milliseconds)) }

    public static func + (lhs: Instant, rhs: Int) -> Instant { lhs.adding(rhs) }
    public static func - (lhs: Instant, rhs: Int) -> Instant { lhs.adding(-rhs) }

    /// Milliseconds from `other` to `self`.
    public static func - (lhs: Instant, rhs: Instant) -> Int { Int(lhs.milliseconds - rhs.milliseconds) }

    public var description: String { "t=\(milliseconds)ms" }
}
