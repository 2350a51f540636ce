/// Where the daemon keeps its sockets, store, manifests and service files by default.
package struct DaemonPaths: Sendable, Hashable {
    package var appSocket: String
    package var controlSocket: String
    package var stateDirectory: String
    package var appsDirectory: String
    package var servicesDirectory: String
    package var configFile: String

    /// The paths a system installation uses.
    package static let system = DaemonPaths(
        appSocket: "/run/herald/dnssd.sock",
        controlSocket: "/run/herald/control.sock",
        stateDirectory: "/var/lib/herald",
        appsDirectory: "/etc/herald/apps.d",
        servicesDirectory: "/etc/herald/services.d",
        configFile: "/etc/herald/heraldd.conf")
}
