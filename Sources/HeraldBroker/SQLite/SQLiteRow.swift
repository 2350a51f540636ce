/// The current row of a running ``SQLiteStatement``, read by column name or position with the type the schema
/// gives the column. Valid only inside the call that hands it over.
///
/// A NULL read as a non-optional type reads as SQLite converts it (0, 0.0, ''): ask for the optional type where
/// the schema allows NULL.
struct SQLiteRow {
    let statement: SQLiteStatement

    /// The position of `column`; a name the statement does not have is a programming error.
    private func index(_ column: String) -> Int32 {
        guard let index = statement.columnIndex(column) else {
            preconditionFailure("no column \(column) in: \(statement.sql)")
        }
        return index
    }

    func int64(_ column: String) -> Int64 { statement.int64(at: index(column)) }

    func optionalInt64(_ column: String) -> Int64? {
        let index = index(column)
        return statement.isNull(at: index) ? nil : statement.int64(at: index)
    }

    func int(_ column: String) -> Int { Int(truncatingIfNeeded: int64(column)) }

    func double(_ column: String) -> Double { statement.double(at: index(column)) }

    func text(_ column: String) -> String { statement.text(at: index(column)) }

    func optionalText(_ column: String) -> String? {
        let index = index(column)
        return statement.isNull(at: index) ? nil : statement.text(at: index)
    }

    /// True when `column` holds NULL.
    func isNull(_ column: String) -> Bool { statement.isNull(at: index(column)) }

    // By position, for statements whose columns have no useful names (`SELECT count(*)`, pragmas).

    func int64(at position: Int) -> Int64 { statement.int64(at: Int32(position)) }

    func int(at position: Int) -> Int { Int(truncatingIfNeeded: int64(at: position)) }

    func double(at position: Int) -> Double { statement.double(at: Int32(position)) }

    func text(at position: Int) -> String { statement.text(at: Int32(position)) }

    func isNull(at position: Int) -> Bool { statement.isNull(at: Int32(position)) }
}
