#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whole files read with the C library, so that a failure keeps the system's reason (`Permission denied`).
package enum FileContents {
    /// The bytes of the file at `path`, or the reason it cannot be read. At most `limit` bytes are read, so that
    /// an endless file (a device) ends too; ask for one more than the largest you accept to tell a file that is
    /// too large.
    package static func read(_ path: String, limit: Int = .max) -> Result<[UInt8], FileError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.current) }
        defer { close(fd) }
        return readAll(from: fd, limit: limit)
    }

    /// Everything `fd` gives until its end or `limit` bytes (standard input is 0).
    package static func readAll(from fd: Int32, limit: Int = .max) -> Result<[UInt8], FileError> {
        var bytes: [UInt8] = []
        let failure = forEachChunk(of: fd, size: min(65_536, max(1, limit))) { chunk in
            bytes += chunk.prefix(limit - bytes.count)
            return bytes.count < limit
        }
        return failure.map { .failure($0) } ?? .success(bytes)
    }

    /// The UTF-8 text of the file at `path`; nil when it cannot be read or is not UTF-8.
    package static func text(_ path: String, limit: Int = .max) -> String? {
        guard case .success(let bytes) = read(path, limit: limit) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Reads the file at `path` in chunks of at most `size` bytes, handing each to `body` until it returns false or
    /// the file ends: for files too large to hold whole. Returns the reason when the file cannot be read.
    package static func forEachChunk(of path: String, size: Int, _ body: (ArraySlice<UInt8>) -> Bool) -> FileError? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .current }
        defer { close(fd) }
        return forEachChunk(of: fd, size: size, body)
    }

    /// Reads `fd` in chunks of at most `size` bytes, handing each to `body` until it returns false or the end.
    package static func forEachChunk(of fd: Int32, size: Int, _ body: (ArraySlice<UInt8>) -> Bool) -> FileError? {
        var chunk = [UInt8](repeating: 0, count: max(1, size))
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .current
            }
            if count == 0 || !body(chunk[0..<count]) { return nil }
        }
    }
}
