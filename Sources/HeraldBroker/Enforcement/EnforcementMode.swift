/// Which processes the kernel keeps off the local network (`[permissions] enforcement` in heraldd.conf; the rules
/// are in docs/enforcement.md).
package enum EnforcementMode: String, Sendable, Hashable, CaseIterable {
    /// No kernel rules: only what apps ask heraldd is gated.
    case off
    /// Processes in the cgroups of registered apps reach the local network only while their app is granted.
    case registered
    /// Every process reaches the local network only when its app is granted, except operators and exempted units.
    case all
}
