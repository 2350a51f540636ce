/// The JSON objects `--json` prints, one per line. Field names are the contract for scripts.

/// A browse result: `event` is `add` or `remove`. A service type found by `browse --all` has no `name`.
struct BrowseEventJSON: Encodable {
    var time: String
    var event: String
    var interface: String
    var interfaceIndex: UInt32
    var domain: String
    var type: String
    var name: String?
}

/// A resolved instance (`browse --resolve`, `resolve`): `event` is `resolved`.
struct ResolutionJSON: Encodable {
    var time: String
    var event = "resolved"
    var interface: String
    var interfaceIndex: UInt32
    var name: String
    var type: String
    var domain: String
    var fullName: String
    var host: String
    var port: UInt16
    var addresses: [String]
    /// Each TXT string as text (bytes that are not UTF-8 as `\xHH`).
    var txt: [String]
    /// The TXT rdata exactly, in hex.
    var txtHex: String

    init(_ resolution: ServiceResolution, time: Timestamp) {
        self.time = time.iso8601
        interface = InterfaceNames.name(of: resolution.interfaceIndex)
        interfaceIndex = resolution.interfaceIndex
        name = resolution.name
        type = resolution.type
        domain = resolution.domain
        fullName = resolution.fullName
        host = resolution.host
        port = resolution.port
        addresses = resolution.addresses
        txt = TXTText.jsonStrings(resolution.txt)
        txtHex = TXTText.hex(resolution.txt)
    }
}

/// A registration's progress: `event` is `registered` (again after a rename) or `withdrawn`.
struct RegistrationJSON: Encodable {
    var time: String
    var event: String
    var name: String
    var requestedName: String
    var renamed: Bool
    var type: String
    var domain: String
    var port: UInt16
}

/// An address found by `lookup`.
struct AddressJSON: Encodable {
    var host: String
    var interface: String
    var interfaceIndex: UInt32
    var family: String
    var address: String
    var ttl: UInt32
}

/// A record found by `query`.
struct RecordJSON: Encodable {
    var name: String
    var interface: String
    var interfaceIndex: UInt32
    var type: String
    var typeCode: UInt16
    var recordClass: UInt16
    var ttl: UInt32
    /// The data in presentation form, as in a zone file.
    var data: String
    var rdataHex: String
}
