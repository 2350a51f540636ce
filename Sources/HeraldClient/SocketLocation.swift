import HeraldIPC

/// Finds the daemon's app socket the way every dnssd client does.
public enum SocketLocation {
    /// `DNSSD_UDS_PATH` when set and not empty, else Herald's default path.
    public static func appSocketPath(environment: [String: String]) -> String {
        if let path = environment[IPCConstants.socketPathEnvironmentVariable], !path.isEmpty { return path }
        return IPCConstants.defaultSocketPath
    }

    /// An explicit path (a `--socket` option) when given and not empty, else `appSocketPath(environment:)`.
    public static func appSocketPath(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        return appSocketPath(environment: environment)
    }
}
