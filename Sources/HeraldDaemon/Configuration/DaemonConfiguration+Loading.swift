import Foundation

extension DaemonConfiguration {
    /// Why a configuration file could not be used.
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads and applies a configuration file. A missing file is fine unless `required`.
    public mutating func load(from path: String, required: Bool) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            if required { throw LoadError(description: "no such file") }
            return
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LoadError(description: "cannot read it (check its permissions)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw LoadError(description: "it is not UTF-8 text")
        }
        try apply(try ConfigurationFile(parsing: text))
    }
}
