/// Constants of the dnssd IPC protocol, version 1, spoken by mDNSResponder's client library and by Herald's
/// app socket.
public enum IPCConstants {
    /// The protocol version in every header.
    public static let version: UInt32 = 1
    /// The default app-socket path (mDNSResponder's conventional path is `/var/run/mDNSResponder`).
    public static let defaultSocketPath = "/run/herald/dnssd.sock"
    /// mDNSResponder's conventional socket path, for drop-in use.
    public static let mDNSResponderSocketPath = "/var/run/mDNSResponder"
    /// The environment variable that overrides the socket path for every client.
    public static let socketPathEnvironmentVariable = "DNSSD_UDS_PATH"

    /// The largest body (`datalen`) accepted by default. mDNSResponder's `read_msg` rejects anything above
    /// 70,000 bytes: a register-record request with 65,535 bytes of rdata and a maximal name still fits.
    public static let maximumDataLength = 70_000

    /// The longest domain-name string a field may hold, without its NUL (`kDNSServiceMaxDomainName` is
    /// 1009 bytes with the NUL).
    public static let maximumDomainNameStringLength = 1008
    /// The longest service-instance name or property name, without its NUL (the daemon reads these into
    /// 256-byte buffers).
    public static let maximumShortStringLength = 255
    /// The longest error-return socket path, without its NUL (`sun_path` holds 108 bytes on Linux).
    public static let maximumErrorReturnPathLength = 107

    /// A get-property name of Herald's own: the value is UTF-8 text saying why the daemon last answered this
    /// process NoAuth (reason and fix), or empty when it never did. Other daemons answer it BadParam.
    public static let permissionExplanationProperty = "HeraldPermissionExplanation"
}
