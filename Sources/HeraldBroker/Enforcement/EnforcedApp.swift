/// A registered app as the kernel rules see it: its decision, its entitlement and the cgroups its processes run in.
package struct EnforcedApp: Hashable, Sendable {
    package var id: String
    /// True while the app is granted; not determined and denied are both "not granted" for the kernel.
    package var granted: Bool
    /// True when the manifest holds the multicast entitlement (multicast and broadcast, mDNS of its own included).
    package var multicast: Bool
    /// The cgroups that exist now and match the app's selectors, as paths below the cgroup v2 root
    /// (`system.slice/tictactoe.service`).
    package var cgroups: [String]

    package init(id: String, granted: Bool, multicast: Bool, cgroups: [String]) {
        self.id = id
        self.granted = granted
        self.multicast = multicast
        self.cgroups = cgroups
    }
}
