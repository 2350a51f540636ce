/// Byte buffers read eight bytes at a time: comparing and hashing names and record data word by word costs an
/// eighth of the loop iterations of going byte by byte.
@usableFromInline
enum WordwiseBytes {
    /// Eight bytes from `index` on, in memory order (the caller checks they are there).
    @inlinable @inline(__always)
    static func word(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt64 {
        UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
    }

    /// True when the two buffers hold the same bytes.
    @inlinable
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        let count = a.count
        var index = 0
        while index + 8 <= count {
            if word(a, at: index) != word(b, at: index) { return false }
            index += 8
        }
        while index < count {
            if a[index] != b[index] { return false }
            index += 1
        }
        return true
    }

    /// True when the two arrays hold the same bytes.
    @inlinable
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in equal(a, b) } }
    }
}
