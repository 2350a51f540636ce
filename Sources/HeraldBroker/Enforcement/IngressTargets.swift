/// The cgroups the ingress program is attached to (docs/enforcement.md, "Incoming multicast and broadcast"): those
/// whose sockets must not receive multicast or broadcast from the LAN. A program attached to a cgroup runs for
/// every cgroup below it too, and a granted cgroup below cannot undo it, so no target is at or above a cgroup that
/// keeps receiving (heraldd's own, an exempted unit's, a granted app's with the multicast entitlement), and no
/// target lies below another one. The empty path stands for the root cgroup's own sockets, which a program attached
/// at the root judges alone (the processes that live in the root cgroup itself).
package enum IngressTargets {
    /// The targets for `input`. `cgroups` is every cgroup of the hierarchy, as paths below its root (read only in
    /// `all` mode, where every program is held back).
    package static func targets(for input: EnforcementInput, cgroups: [String]) -> [String] {
        var open = Set(input.exemptCgroups)
        for app in input.apps where app.granted && app.multicast { open.formUnion(app.cgroups) }
        // At or below an open cgroup: it keeps receiving, as the rules let it send (the most open wins).
        let isOpen = { (cgroup: String) in selfAndAncestors(of: cgroup).contains { open.contains($0) } }
        var candidates: Set<String>
        switch input.mode {
        case .off: return []
        case .registered:
            candidates = Set(
                input.apps.filter { !($0.granted && $0.multicast) }.flatMap(\.cgroups).filter { !isOpen($0) })
        case .all:
            // Every cgroup neither at or below an open one nor above one, and the root cgroup's own processes.
            let aboveOpen = Set(open.flatMap { selfAndAncestors(of: $0).dropFirst() })
            candidates = Set(cgroups.filter { !isOpen($0) && !aboveOpen.contains($0) })
        }
        let highest = candidates.filter { candidate in
            !selfAndAncestors(of: candidate).dropFirst().contains { candidates.contains($0) }
        }
        return (input.mode == .all ? [""] : []) + highest.sorted()
    }

    /// `a/b/c`, `a/b`, `a`.
    static func selfAndAncestors(of cgroup: String) -> [String] {
        var result = [cgroup]
        var path = Substring(cgroup)
        while let slash = path.lastIndex(of: "/") {
            path = path[..<slash]
            result.append(String(path))
        }
        return result
    }
}
