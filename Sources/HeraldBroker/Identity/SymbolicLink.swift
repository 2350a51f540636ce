#if canImport(Glibc)
    import Glibc
#endif

/// Reading a symbolic link whole. Foundation's `destinationOfSymbolicLink` cuts a target after about 1 KiB,
/// so an executable deep in a directory tree (paths may have up to 4095 bytes) would never match its manifest.
enum SymbolicLink {
    /// Why a link could not be read.
    struct ReadError: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// The target of the link at `path`, however long.
    static func target(of path: String) throws(ReadError) -> String {
        var capacity = 4096
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let length = buffer.withUnsafeMutableBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { readlink(path, $0.baseAddress!, capacity) }
            }
            guard length >= 0 else { throw ReadError(code: errno) }
            // A target that filled the buffer may have been cut: read again with more room.
            if length < capacity { return String(decoding: buffer[..<length], as: UTF8.self) }
            guard capacity < 1 << 16 else { throw ReadError(code: ENAMETOOLONG) }
            capacity *= 2
        }
    }
}
