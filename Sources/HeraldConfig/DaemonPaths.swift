/// Where the daemon keeps its sockets, store, manifests and service files by default.
public struct DaemonPaths: Sendable, Hashable {
    public var appSocket: String
    public var controlSocket: String
    public var stateDirectory: String
    public var appsDirectory: String
    public var servicesDirectory: String
    public var configFile: String

    /// The paths a system installation uses.
    public static let system = DaemonPaths(
        appSocket: "/run/herald/dnssd.sock",
        controlSocket: "/run/herald/control.sock",
        stateDirectory: "/var/lib/herald",
        appsDirectory: "/etc/herald/apps.d",
        servicesDirectory: "/etc/herald/services.d",
        configFile: "/etc/herald/heraldd.conf")
}
