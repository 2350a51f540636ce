/// What changed between two versions of an app's manifest, for the audit trail (docs/permissions.md, "The store":
/// a changed manifest keeps the app's decision, and the audit log records what changed).
extension Manifest {
    /// One line per changed field, such as `NSBonjourServices: +_chat._tcp -_game._udp`; empty when equal.
    package func changes(from old: Manifest) -> [String] {
        var lines: [String] = []
        if id.rawValue != old.id.rawValue { lines.append("id: \(old.id) → \(id)") }
        if name != old.name {
            lines.append("name: \(ManifestDocument.quoted(old.name)) → \(ManifestDocument.quoted(name))")
        }
        func list(_ key: ManifestKey, _ new: [String], _ old: [String], same: (String, String) -> Bool = (==)) {
            let added = new.filter { item in !old.contains { same($0, item) } }
            let removed = old.filter { item in !new.contains { same($0, item) } }
            guard !added.isEmpty || !removed.isEmpty else { return }
            let items = added.map { "+" + $0 } + removed.map { "-" + $0 }
            lines.append(key.rawValue + ": " + items.joined(separator: " "))
        }
        list(.executables, executables, old.executables)
        list(.systemdUnits, systemdUnits, old.systemdUnits)
        let pins = executableSHA256.mapValues(\.hex)
        let oldPins = old.executableSHA256.mapValues(\.hex)
        if pins != oldPins {
            let changed = Set(pins.keys).union(oldPins.keys).filter { pins[$0] != oldPins[$0] }.sorted()
            lines.append(
                ManifestKey.executableSHA256.rawValue + ": "
                    + changed.map { path in
                        switch (oldPins[path], pins[path]) {
                        case (nil, _?): return "+" + path
                        case (_?, nil): return "-" + path
                        default: return "~" + path
                        }
                    }.joined(separator: " "))
        }
        list(.bonjourServices, bonjourServices.map(\.description), old.bonjourServices.map(\.description)) {
            $0.lowercased() == $1.lowercased()
        }
        switch (old.usageDescription, usageDescription) {
        case (nil, _?): lines.append("\(ManifestKey.usageDescription.rawValue): added")
        case (_?, nil): lines.append("\(ManifestKey.usageDescription.rawValue): removed")
        case (let before?, let after?) where before != after:
            lines.append("\(ManifestKey.usageDescription.rawValue): changed")
        default: break
        }
        list(.entitlements, entitlements, old.entitlements)
        return lines
    }
}
