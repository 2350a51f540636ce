/// Constants of the dnssd IPC protocol, version 1, spoken by mDNSResponder's client library and by Herald's
/// app socket.
public enum IPCConstants {
    /// The protocol version in every header.
    public static let version: UInt32 = 1
    /// The default app-socket path (mDNSResponder's conventional path is `/var/run/mDNSResponder`).
    public static let defaultSocketPath = "/run/herald/dnssd.sock"
    /// The environment variable that overrides the socket path for every client.
    public static let socketPathEnvironmentVariable = "DNSSD_UDS_PATH"
}
