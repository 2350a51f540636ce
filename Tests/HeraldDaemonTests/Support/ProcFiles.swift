import Foundation

/// The lines of a file under /proc (its size reads as 0, so it is read to the end), or nil when unreadable.
func procLines(_ path: String) -> [Substring]? {
    guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() else { return nil }
    return String(decoding: data, as: UTF8.self).split(separator: "\n")
}

/// The number after `field` on a `Field:   1234 kB` line (spaces or a tab after the colon).
func kilobytes(in line: Substring, field: String) -> Int? {
    guard line.hasPrefix(field + ":") else { return nil }
    return Int(line.dropFirst(field.count + 1).split(whereSeparator: \.isWhitespace).first ?? "")
}
