import Foundation

extension DaemonConfiguration {
    /// Why a configuration file could not be used.
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The largest configuration file read; a bigger one (or an endless device) is refused.
    static let largestFile = 1 << 20

    /// Reads and applies a configuration file. A missing file is fine unless `required`.
    public mutating func load(from path: String, required: Bool) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            if required { throw LoadError(description: "no such file") }
            return
        }
        guard !isDirectory.boolValue else { throw LoadError(description: "it is a directory, not a file") }
        // Read through a handle rather than by the file's size, so that a device such as /dev/null works too.
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LoadError(description: "cannot read it (check its permissions)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: Self.largestFile + 1) ?? Data()
        } catch {
            throw LoadError(description: "cannot read it: \(error.localizedDescription)")
        }
        guard data.count <= Self.largestFile else {
            throw LoadError(description: "it is larger than 1 MiB, which no configuration file is")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw LoadError(description: "it is not UTF-8 text")
        }
        try apply(try ConfigurationFile(parsing: text))
    }
}
