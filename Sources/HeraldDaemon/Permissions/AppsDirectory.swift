import HeraldBroker
import HeraldFiles
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The apps directory (`--apps-dir`): manifest files (`*.json`, `*.plist`) that operators drop in instead of
/// running `herald app add`. Read at start and on SIGHUP; each valid file is registered (a changed file updates
/// its app and keeps its decision), each broken one is reported with every problem and skipped. Removing a
/// file does not remove the app: that is `herald app remove ID`, so that a decision is never lost by accident.
package struct AppsDirectory {
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// What one reading found.
    package struct Outcome: Sendable {
        package var registered: [String] = []
        package var unchanged = 0
        package var failed: [(file: String, problem: String)] = []
    }

    /// Registers every manifest in the directory through `broker`. A missing directory is not an error. A
    /// directory, or a file in it, that someone other than root or the daemon's own user could have written is
    /// refused whole, as sshd refuses keys with loose permissions: whoever can write a manifest there can name
    /// any program an app.
    @discardableResult
    package func load(into broker: PermissionBroker, logger: Logger) -> Outcome {
        var outcome = Outcome()
        guard let names = try? DirectoryEntries.names(in: path).get() else { return outcome }
        if let problem = Self.looseness(of: path, directory: true) {
            logger.error("apps: not loading \(path): \(problem)")
            outcome.failed.append((path, problem))
            return outcome
        }
        for name in names.sorted() where name.hasSuffix(".json") || name.hasSuffix(".plist") {
            let file = PathName.joined(path, name)
            if let problem = Self.looseness(of: file, directory: false) {
                logger.error("apps: \(file): not registered: \(problem)")
                outcome.failed.append((file, problem))
                continue
            }
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

    /// What makes `path` untrustworthy as a source of manifests, with the fix; nil when only root or this process's
    /// user can have written it. Symbolic links are not followed (a link could point anywhere, at any time).
    static func looseness(of path: String, directory: Bool) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "cannot be read: \(String(cString: strerror(errno)))" }
        let kind = info.st_mode & S_IFMT
        if directory {
            guard kind == S_IFDIR else { return "is not a directory" }
        } else if kind == S_IFLNK {
            return "is a symbolic link; copy the manifest into the directory instead (or use herald app add FILE)"
        } else if kind != S_IFREG {
            return "is not a regular file"
        }
        let trusted: Set<UInt32> = [0, getuid()]
        guard trusted.contains(info.st_uid) else {
            return "is owned by uid \(info.st_uid), not root; run: chown root \(path)"
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return
                "can be written by other users (mode \(String(info.st_mode & 0o7777, radix: 8))); run: chmod go-w \(path)"
        }
        return nil
    }
}
