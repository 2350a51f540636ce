import HeraldIPC

/// What resolving one service instance on one interface found: its host and port (SRV), its TXT record,
/// and the host's addresses on that interface.
struct ServiceResolution: Equatable {
    var interfaceIndex: UInt32
    /// The instance name as people write it (`Living Room Printer`).
    var name: String
    /// `_ipp._tcp.`
    var type: String
    /// `local.`
    var domain: String
    /// The full name as the daemon reports it (presentation form, escaped).
    var fullName: String
    /// The SRV target: `printer.local.`
    var host: String
    var port: UInt16
    /// The TXT rdata, exactly as published.
    var txt: [UInt8]
    /// The host's addresses in the order they became known.
    var addresses: [String]

    /// Same service, same answer (the interface aside): used to merge identical answers from two interfaces.
    func hasSameAnswer(as other: ServiceResolution) -> Bool {
        name == other.name && type.lowercased() == other.type.lowercased()
            && host.lowercased() == other.host.lowercased()
            && port == other.port && txt == other.txt && Set(addresses) == Set(other.addresses)
    }
}
