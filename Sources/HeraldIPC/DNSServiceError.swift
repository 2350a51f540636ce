/// A `DNSServiceErrorType` of `dns_sd.h`: a signed 32-bit code, carried on the wire as its two's-complement
/// bit pattern in a big-endian `uint32`. Codes not named here are kept as they are.
public struct DNSServiceError: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The code from its wire form (a big-endian `uint32` already read into host order).
    public init(wireValue: UInt32) {
        self.rawValue = Int32(bitPattern: wireValue)
    }

    /// The code as written on the wire.
    public var wireValue: UInt32 { UInt32(bitPattern: rawValue) }

    public static let noError = DNSServiceError(rawValue: 0)
    public static let unknown = DNSServiceError(rawValue: -65537)
    public static let noSuchName = DNSServiceError(rawValue: -65538)
    public static let noMemory = DNSServiceError(rawValue: -65539)
    public static let badParam = DNSServiceError(rawValue: -65540)
    public static let badReference = DNSServiceError(rawValue: -65541)
    public static let badState = DNSServiceError(rawValue: -65542)
    public static let badFlags = DNSServiceError(rawValue: -65543)
    public static let unsupported = DNSServiceError(rawValue: -65544)
    public static let notInitialized = DNSServiceError(rawValue: -65545)
    public static let alreadyRegistered = DNSServiceError(rawValue: -65547)
    public static let nameConflict = DNSServiceError(rawValue: -65548)
    public static let invalid = DNSServiceError(rawValue: -65549)
    public static let firewall = DNSServiceError(rawValue: -65550)
    public static let incompatible = DNSServiceError(rawValue: -65551)
    public static let badInterfaceIndex = DNSServiceError(rawValue: -65552)
    public static let refused = DNSServiceError(rawValue: -65553)
    public static let noSuchRecord = DNSServiceError(rawValue: -65554)
    public static let noAuth = DNSServiceError(rawValue: -65555)
    public static let noSuchKey = DNSServiceError(rawValue: -65556)
    public static let natTraversal = DNSServiceError(rawValue: -65557)
    public static let doubleNAT = DNSServiceError(rawValue: -65558)
    public static let badTime = DNSServiceError(rawValue: -65559)
    public static let badSig = DNSServiceError(rawValue: -65560)
    public static let badKey = DNSServiceError(rawValue: -65561)
    public static let transient = DNSServiceError(rawValue: -65562)
    public static let serviceNotRunning = DNSServiceError(rawValue: -65563)
    public static let natPortMappingUnsupported = DNSServiceError(rawValue: -65564)
    public static let natPortMappingDisabled = DNSServiceError(rawValue: -65565)
    public static let noRouter = DNSServiceError(rawValue: -65566)
    public static let pollingMode = DNSServiceError(rawValue: -65567)
    public static let timeout = DNSServiceError(rawValue: -65568)
    public static let defunctConnection = DNSServiceError(rawValue: -65569)
    public static let policyDenied = DNSServiceError(rawValue: -65570)
    public static let notPermitted = DNSServiceError(rawValue: -65571)
    public static let staleData = DNSServiceError(rawValue: -65572)

    /// Every named code, in numeric order from `noError` down.
    public static let allNamed: [DNSServiceError] = [
        .noError, .unknown, .noSuchName, .noMemory, .badParam, .badReference, .badState, .badFlags, .unsupported,
        .notInitialized, .alreadyRegistered, .nameConflict, .invalid, .firewall, .incompatible,
        .badInterfaceIndex, .refused, .noSuchRecord, .noAuth, .noSuchKey, .natTraversal, .doubleNAT, .badTime,
        .badSig, .badKey, .transient, .serviceNotRunning, .natPortMappingUnsupported, .natPortMappingDisabled,
        .noRouter, .pollingMode, .timeout, .defunctConnection, .policyDenied, .notPermitted, .staleData,
    ]

    /// The `dns_sd.h` name without its `kDNSServiceErr_` prefix (`NoAuth`), or nil for an unnamed code.
    public var name: String? { Self.names[rawValue]?.0 }

    /// What the code means, in a few words.
    public var meaning: String { Self.names[rawValue]?.1 ?? "unrecognised error code" }

    /// For example `NoAuth (-65555): not permitted`.
    public var description: String {
        "\(name ?? "Error") (\(rawValue)): \(meaning)"
    }

    private static let names: [Int32: (String, String)] = [
        0: ("NoError", "success"),
        -65537: ("Unknown", "unknown error"),
        -65538: ("NoSuchName", "no such name"),
        -65539: ("NoMemory", "out of memory"),
        -65540: ("BadParam", "bad parameter"),
        -65541: ("BadReference", "bad reference"),
        -65542: ("BadState", "bad state"),
        -65543: ("BadFlags", "bad flags"),
        -65544: ("Unsupported", "unsupported operation"),
        -65545: ("NotInitialized", "not initialized"),
        -65547: ("AlreadyRegistered", "already registered"),
        -65548: ("NameConflict", "name conflict"),
        -65549: ("Invalid", "invalid"),
        -65550: ("Firewall", "blocked by a firewall"),
        -65551: ("Incompatible", "client library incompatible with the daemon"),
        -65552: ("BadInterfaceIndex", "bad interface index"),
        -65553: ("Refused", "refused"),
        -65554: ("NoSuchRecord", "no such record"),
        -65555: ("NoAuth", "not permitted"),
        -65556: ("NoSuchKey", "no such key"),
        -65557: ("NATTraversal", "NAT traversal failed"),
        -65558: ("DoubleNAT", "double NAT"),
        -65559: ("BadTime", "bad time"),
        -65560: ("BadSig", "bad signature"),
        -65561: ("BadKey", "bad key"),
        -65562: ("Transient", "transient failure"),
        -65563: ("ServiceNotRunning", "the daemon is not running"),
        -65564: ("NATPortMappingUnsupported", "the NAT does not support port mapping"),
        -65565: ("NATPortMappingDisabled", "port mapping is disabled on the NAT"),
        -65566: ("NoRouter", "no router configured"),
        -65567: ("PollingMode", "polling mode"),
        -65568: ("Timeout", "timed out"),
        -65569: ("DefunctConnection", "the connection to the daemon is defunct"),
        -65570: ("PolicyDenied", "denied by policy"),
        -65571: ("NotPermitted", "not permitted by the system"),
        -65572: ("StaleData", "stale data"),
    ]
}
