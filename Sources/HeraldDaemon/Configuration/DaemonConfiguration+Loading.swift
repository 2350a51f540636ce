import HeraldConfig
import HeraldFiles

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonConfiguration {
    /// Why a configuration file could not be used.
    package struct LoadError: Error, CustomStringConvertible {
        package var description: String
    }

    /// The largest configuration file read; a bigger one (or an endless device) is refused.
    static let largestFile = 1 << 20

    /// Reads and applies a configuration file. A missing file is fine unless `required`.
    package mutating func load(from path: String, required: Bool) throws {
        guard let kind = try? FileKind.of(path).get() else {
            if required { throw LoadError(description: "no such file") }
            return
        }
        guard kind != .directory else { throw LoadError(description: "it is a directory, not a file") }
        // Read to the end rather than by the file's size, so that a device such as /dev/null works too.
        let bytes: [UInt8]
        switch FileContents.read(path, limit: Self.largestFile + 1) {
        case .success(let read): bytes = read
        case .failure(let failure) where failure.code == EACCES || failure.code == EPERM:
            throw LoadError(description: "cannot read it (check its permissions)")
        case .failure(let failure):
            throw LoadError(description: "cannot read it: \(failure)")
        }
        guard bytes.count <= Self.largestFile else {
            throw LoadError(description: "it is larger than 1 MiB, which no configuration file is")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw LoadError(description: "it is not UTF-8 text")
        }
        try apply(try ConfigurationFile(parsing: text))
    }
}
