/// The special interface index values of `dns_sd.h`; any other value is an interface index of the system.
public enum DNSServiceInterfaceIndex {
    /// Every suitable interface.
    public static let any: UInt32 = 0
    /// Only this machine: records and results never leave the host (-1).
    public static let localOnly: UInt32 = 0xFFFF_FFFF
    /// Unicast DNS only (-2).
    public static let unicast: UInt32 = 0xFFFF_FFFE
    /// Peer-to-peer interfaces (-3).
    public static let p2p: UInt32 = 0xFFFF_FFFD
    /// Bluetooth Low Energy (-4).
    public static let ble: UInt32 = 0xFFFF_FFFC
    /// Reserved, not used by the API (-5).
    public static let infra: UInt32 = 0xFFFF_FFFB
}
