/// Why the permission store could not be opened or changed. Each description names the file or app and
/// what an operator can do about it.
package enum PermissionStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The directory that should hold a new store does not exist.
    case directoryMissing(String)
    /// The file exists but cannot be read or written (permissions, a directory in its place).
    case unreadable(path: String, reason: String)
    /// The file exists but is not a Herald store (another SQLite database, or not SQLite at all).
    case notAHeraldStore(path: String, reason: String)
    /// The file is a Herald store whose content is damaged.
    case corrupt(path: String, reason: String)
    /// The store was written by a newer Herald with migrations this one does not know.
    case newerSchema(path: String, unknownMigrations: [String])
    /// The app is not registered.
    case unknownApp(String)
    /// The manifest claims selectors that other apps already claim.
    case selectorConflict(app: String, conflicts: [SelectorConflict])
    /// A database error during an operation; nothing of that operation was committed.
    case database(String)

    package var description: String {
        switch self {
        case .directoryMissing(let path):
            return "cannot create the permission store: the directory \(path) does not exist"
        case .unreadable(let path, let reason):
            return "cannot open the permission store \(path): \(reason); check its owner and permissions"
        case .notAHeraldStore(let path, let reason):
            return "\(path) is not a Herald permission store (\(reason)); it was left untouched. Point --state-dir "
                + "at another directory, or move the file away to start a new store"
        case .corrupt(let path, let reason):
            return "the permission store \(path) is damaged (\(reason)); it was left untouched. Restore it from a "
                + "backup, or move it away to start a new store (registered apps and decisions will be lost)"
        case .newerSchema(let path, let unknown):
            return "the permission store \(path) was written by a newer Herald (unknown migrations: "
                + unknown.joined(separator: ", ") + "); run that version, or restore an older store"
        case .unknownApp(let id):
            return "no app with id \(id) is registered; 'herald app list' shows the registered apps"
        case .selectorConflict(let app, let conflicts):
            return "\(app) cannot be registered: " + conflicts.map(\.description).joined(separator: "; ")
                + ". A process must match one app only: remove the selector from one of the manifests"
        case .database(let message):
            return "permission store error: \(message); nothing was changed"
        }
    }
}
