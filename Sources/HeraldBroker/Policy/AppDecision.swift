/// An operator's decision about an app (docs/permissions.md, "Deciding", rule 5). It belongs to the app, not to
/// each service type.
package enum AppDecision: String, Hashable, Sendable, CaseIterable {
    case granted
    case denied
    /// Nobody has decided yet (the state of a new app, and after `herald reset`).
    case notDetermined = "not-determined"
}

/// What the permission rules read about registered apps at one moment: the manifests and the decisions.
/// The store produces it; the daemon keeps one in memory and replaces it when something changes.
package struct PermissionSnapshot: Hashable, Sendable {
    package var registry: ManifestRegistry
    /// The decided apps; an app missing here is not determined.
    package var decisions: [AppID: AppDecision]

    package init(registry: ManifestRegistry = ManifestRegistry(), decisions: [AppID: AppDecision] = [:]) {
        self.registry = registry
        self.decisions = decisions
    }

    /// A snapshot of `manifests` and `decisions`.
    package init(manifests: [Manifest], decisions: [AppID: AppDecision] = [:]) {
        self.init(registry: ManifestRegistry(manifests), decisions: decisions)
    }

    /// The decision about `app`, `.notDetermined` when none was made.
    package func decision(for app: AppID) -> AppDecision {
        decisions[app] ?? .notDetermined
    }
}
