import Foundation
import HeraldBroker
import Logging

/// The apps directory (`--apps-dir`): manifest files (`*.json`, `*.plist`) that operators drop in instead of
/// running `herald app add`. Read at start and on SIGHUP; each valid file is registered (a changed file updates
/// its app and keeps its decision), each broken one is reported with every problem and skipped. Removing a
/// file does not remove the app: that is `herald app remove ID`, so that a decision is never lost by accident.
public struct AppsDirectory {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// What one reading found.
    public struct Outcome: Sendable {
        public var registered: [String] = []
        public var unchanged = 0
        public var failed: [(file: String, problem: String)] = []
    }

    /// Registers every manifest in the directory through `broker`. A missing directory is not an error.
    @discardableResult
    public func load(into broker: PermissionBroker, logger: Logger) -> Outcome {
        var outcome = Outcome()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return outcome }
        for name in names.sorted() where name.hasSuffix(".json") || name.hasSuffix(".plist") {
            let file = (path as NSString).appendingPathComponent(name)
            do {
                let validated = try ManifestParser.parse(contentsOf: file)
                for warning in validated.warnings { logger.warning("apps: \(file): \(warning.text)") }
                let change = try broker.register(validated.manifest, by: "apps directory (\(file))")
                switch change {
                case .unchanged: outcome.unchanged += 1
                case .added, .updated: outcome.registered.append(validated.manifest.id.rawValue)
                }
            } catch let error as ManifestError {
                logger.error("apps: \(file): not registered: \(error)")
                outcome.failed.append((file, error.description))
            } catch {
                logger.error("apps: \(file): not registered: \(error)")
                outcome.failed.append((file, "\(error)"))
            }
        }
        if !outcome.registered.isEmpty {
            logger.info("apps: registered from \(path): \(outcome.registered.joined(separator: ", "))")
        }
        return outcome
    }
}
