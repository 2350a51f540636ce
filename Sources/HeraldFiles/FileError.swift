#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A failed system call on a file, by its `errno`; its description is the system's reason (`Permission denied`).
package struct FileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value.
    package let code: Int32

    package init(_ code: Int32) {
        self.code = code
    }

    /// The failure of the call that just failed, from `errno`.
    package static var current: FileError { FileError(errno) }

    package var description: String { String(cString: strerror(code)) }
}
