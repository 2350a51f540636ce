/// The registered manifests, and which of them a process is (docs/permissions.md, "Identity selectors").
///
/// A manifest matches a process when one of its `executables` is the process's executable (and, if that path
/// is pinned, the content's SHA-256 is the pinned one), or when one of its `systemdUnits` is the process's unit.
package struct ManifestRegistry: Hashable, Sendable {
    /// The manifests, ordered by id.
    package private(set) var manifests: [Manifest]

    /// A registry of `manifests`; of two with the same id, the later one is kept.
    package init(_ manifests: [Manifest] = []) {
        var byID: [AppID: Manifest] = [:]
        for manifest in manifests { byID[manifest.id] = manifest }
        self.manifests = byID.values.sorted { $0.id < $1.id }
    }

    /// The manifest with `id`, if registered.
    package subscript(id: AppID) -> Manifest? {
        manifests.first { $0.id == id }
    }

    /// Adds `manifest`, replacing the one with the same id.
    package mutating func insert(_ manifest: Manifest) {
        self = ManifestRegistry(manifests + [manifest])
    }

    /// Removes the manifest with `id`; returns it if there was one.
    @discardableResult
    package mutating func remove(_ id: AppID) -> Manifest? {
        guard let index = manifests.firstIndex(where: { $0.id == id }) else { return nil }
        return manifests.remove(at: index)
    }

    /// The app a process is, or nil when no manifest matches it (rule 2: unregistered).
    ///
    /// Registration keeps selectors unique (see ``conflicts(with:)``), but an executable of one app can still
    /// run in a unit of another; then the more specific match wins: both selectors, then the unit (which is
    /// how an interpreted app is told from its interpreter), then the executable; ties go to the lower id.
    package func match(_ caller: CallerIdentity) -> AppMatch? {
        matches(caller).first
    }

    /// Every manifest that matches the process, best first (see ``match(_:)``).
    package func matches(_ caller: CallerIdentity) -> [AppMatch] {
        manifests.compactMap { AppMatch(manifest: $0, caller: caller) }
            .sorted { ($0.rank, $0.manifest.id) < ($1.rank, $1.manifest.id) }
    }

    /// True when some manifest pins `path`, so the daemon must compute the executable's SHA-256 to match it.
    package func needsDigest(forExecutable path: String) -> Bool {
        manifests.contains { $0.executableSHA256[path] != nil }
    }

    /// The selectors of `manifest` that another registered app (not the same id) already claims.
    package func conflicts(with manifest: Manifest) -> [SelectorConflict] {
        var conflicts: [SelectorConflict] = []
        for other in manifests where other.id != manifest.id {
            for path in manifest.executables where other.executables.contains(path) {
                conflicts.append(SelectorConflict(selector: .executable(path), otherApp: other.id))
            }
            for unit in manifest.systemdUnits
            where other.systemdUnits.contains(where: { Self.unitSelectorsOverlap(unit, $0) }) {
                conflicts.append(SelectorConflict(selector: .systemdUnit(unit), otherApp: other.id))
            }
        }
        return conflicts
    }

    /// True when one selector names what the other does: equal, one a template of the other's instance, or a
    /// pattern with `*` that matches the other (read as a name). Two patterns that some name could match both
    /// (`app-*-tictactoe-*.scope`, `app-*-chess-*.scope`) are not a conflict: such a unit is each app's.
    static func unitSelectorsOverlap(_ a: String, _ b: String) -> Bool {
        let (first, second) = (SystemdUnit.parse(selector: a), SystemdUnit.parse(selector: b))
        guard first.ofUser == second.ofUser else { return false }
        return SystemdUnit.unitName(first.name, matches: second.name)
            || SystemdUnit.unitName(second.name, matches: first.name)
    }
}

/// How a process matched a manifest.
package struct AppMatch: Hashable, Sendable {
    package let manifest: Manifest
    /// The selectors that matched: one executable, one unit, or both.
    package let selectors: [AppSelector]

    /// The match of `manifest` for `caller`, or nil when none of its selectors matches.
    package init?(manifest: Manifest, caller: CallerIdentity) {
        var selectors: [AppSelector] = []
        if let path = Self.matchingExecutable(manifest, caller) { selectors.append(.executable(path)) }
        if let unit = caller.systemdUnit,
            let selector = manifest.systemdUnits.first(where: { unit.matches(selector: $0) })
        {
            selectors.append(.systemdUnit(selector))
        }
        guard !selectors.isEmpty else { return nil }
        self.manifest = manifest
        self.selectors = selectors
    }

    /// 0 for both selectors, 1 for a unit, 2 for an executable: lower is more specific.
    var rank: Int {
        if selectors.count > 1 { return 0 }
        if case .systemdUnit = selectors[0] { return 1 }
        return 2
    }

    /// The executable selector that matches: the same path, naming the file that runs, and the pinned content if
    /// pinned.
    static func matchingExecutable(_ manifest: Manifest, _ caller: CallerIdentity) -> String? {
        guard let executable = caller.executable, executable.namesRunningFile,
            manifest.executables.contains(executable.path)
        else { return nil }
        if let pin = manifest.executableSHA256[executable.path] {
            // A pinned program is its content and nothing else: not even libraries taken from elsewhere.
            guard caller.executableSHA256 == pin, !executable.librariesFromElsewhere else { return nil }
        }
        return executable.path
    }
}

/// One identity selector of a manifest.
package enum AppSelector: Hashable, Sendable, CustomStringConvertible {
    case executable(String)
    case systemdUnit(String)

    package var description: String {
        switch self {
        case .executable(let path): return "executable \(path)"
        case .systemdUnit(let unit): return "systemd unit \(unit)"
        }
    }
}

/// A selector that two apps claim; registration refuses it, so that a process is one app.
package struct SelectorConflict: Hashable, Sendable, CustomStringConvertible {
    package let selector: AppSelector
    /// The registered app that already claims it.
    package let otherApp: AppID

    package var description: String { "\(selector) is already claimed by \(otherApp)" }
}
