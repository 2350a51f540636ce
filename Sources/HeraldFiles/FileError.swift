#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call on a file, by its `errno`; its description is the system's reason (`Permission denied`).
public struct FileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value.
    public let code: Int32

    public init(_ code: Int32) {
        self.code = code
    }

    /// The failure of the call that just failed, from `errno`.
    public static var current: FileError { FileError(errno) }

    public var description: String { String(cString: strerror(code)) }
}
