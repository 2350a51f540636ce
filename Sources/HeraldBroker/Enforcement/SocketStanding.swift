/// How much of the local network the nftables rules hold back from a cgroup's sockets (docs/enforcement.md,
/// "Sockets made before a process moved"), in the order of strictness the moved-socket programs compare: a
/// process whose cgroup stands stricter than the cgroup its socket was made in has that socket's calls refused.
package enum SocketStanding: UInt8, Sendable, Hashable, Comparable {
    /// The LAN is open.
    case open = 0
    /// Multicast and broadcast are held back (an app granted without the multicast entitlement).
    case groupsHeld = 1
    /// The whole LAN is held back.
    case held = 2

    package static func < (a: SocketStanding, b: SocketStanding) -> Bool { a.rawValue < b.rawValue }

    /// The standing of a cgroup the moved-socket programs find no entry for: what the rules give a cgroup that
    /// no app names.
    package static func fallback(for mode: EnforcementMode) -> SocketStanding { mode == .all ? .held : .open }

    /// The standing the rules of `input` give the sockets of `cgroup` (a path below the hierarchy's root; empty
    /// for the root), judged as the output chains judge them: exempt first, then granted apps, then apps held
    /// back, then, in `all` mode, everyone else.
    package static func of(_ cgroup: String, in input: EnforcementInput) -> SocketStanding {
        guard input.mode != .off else { return .open }
        let lineage = Set(cgroup.isEmpty ? [] : IngressTargets.selfAndAncestors(of: cgroup))
        let names = { (cgroups: [String]) in cgroups.contains { lineage.contains($0) } }
        if names(input.exemptCgroups) { return .open }
        let granted = input.apps.filter(\.granted)
        if names(granted.filter(\.multicast).flatMap(\.cgroups)) { return .open }
        if names(granted.flatMap(\.cgroups)) { return .groupsHeld }
        if names(input.apps.flatMap(\.cgroups)) || input.mode == .all { return .held }
        return .open
    }

    /// The cgroups of `cgroups` (the hierarchy's tree, the root as the empty path) whose standing differs from
    /// the mode's ``fallback(for:)``: what the programs' standing map holds.
    package static func entries(for input: EnforcementInput, cgroups: [String]) -> [String: SocketStanding] {
        let fallback = fallback(for: input.mode)
        var result: [String: SocketStanding] = [:]
        for cgroup in [""] + cgroups {
            let standing = of(cgroup, in: input)
            if standing != fallback { result[cgroup] = standing }
        }
        return result
    }
}
