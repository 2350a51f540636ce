#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whole files read with the C library, so that a failure keeps the system's reason (`Permission denied`).
enum FileContents {
    /// The bytes of the file at `path`, or the reason it cannot be read.
    static func read(_ path: String) -> Result<[UInt8], ReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadFailure(errno)) }
        defer { close(fd) }
        return readAll(from: fd)
    }

    /// Everything `fd` gives until its end (standard input is 0).
    static func readAll(from fd: Int32) -> Result<[UInt8], ReadFailure> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadFailure(errno))
            }
            if count == 0 { return .success(bytes) }
            bytes += chunk[0..<count]
        }
    }

    /// Why a read failed, in the system's words.
    struct ReadFailure: Error, CustomStringConvertible {
        let code: Int32
        init(_ code: Int32) { self.code = code }
        var description: String { String(cString: strerror(code)) }
    }
}
