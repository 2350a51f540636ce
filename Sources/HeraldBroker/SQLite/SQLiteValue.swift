/// A value as SQLite stores it: one of its five storage classes.
enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value that binds to a statement's parameter.
protocol SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { get }
}

extension SQLiteValue: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { self }
}

extension Int64: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { .integer(self) }
}

extension Int: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Int32: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Bool: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
}

extension Double: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { .real(self) }
}

extension String: SQLiteValueConvertible {
    var sqliteValue: SQLiteValue { .text(self) }
}

extension Optional: SQLiteValueConvertible where Wrapped: SQLiteValueConvertible {
    /// `NULL` for nil.
    var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}
