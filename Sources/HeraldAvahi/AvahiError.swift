import HeraldIPC

/// An error as Avahi's daemon sends it on the bus: its D-Bus error name, which libavahi-client turns back into an
/// `AVAHI_ERR_*` number, and the text Avahi gives with it.
package struct AvahiError: Hashable, Sendable, Error, CustomStringConvertible {
    package var name: String
    package var message: String

    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    package var description: String { "\(name): \(message)" }

    private static func avahi(_ suffix: String, _ message: String) -> AvahiError {
        AvahiError(name: "org.freedesktop.Avahi." + suffix, message: message)
    }

    package static let failure = avahi("Failure", "Operation failed")
    package static let badState = avahi("BadStateError", "Bad state")
    package static let invalidHostName = avahi("InvalidHostNameError", "Invalid host name")
    package static let invalidDomainName = avahi("InvalidDomainNameError", "Invalid domain name")
    package static let invalidServiceName = avahi("InvalidServiceNameError", "Invalid service name")
    package static let invalidServiceType = avahi("InvalidServiceTypeError", "Invalid service type")
    package static let invalidServiceSubtype = avahi("InvalidServiceSubtypeError", "Invalid service subtype")
    package static let invalidAddress = avahi("InvalidAddressError", "Invalid address")
    package static let invalidInterface = avahi("InvalidInterfaceError", "Invalid interface index")
    package static let invalidProtocol = avahi("InvalidProtocolError", "Invalid protocol specification")
    package static let invalidFlags = avahi("InvalidFlagsError", "Invalid flags")
    package static let invalidArgument = avahi("InvalidArgumentError", "Invalid argument")
    package static let invalidRecord = avahi("InvalidRecordError", "Invalid record")
    package static let invalidObject = avahi("InvalidObjectError", "Invalid object")
    package static let collision = avahi("CollisionError", "Local name collision")
    package static let timeout = avahi("TimeoutError", "Timeout reached")
    package static let notFound = avahi("NotFoundError", "Not found")
    package static let notPermitted = avahi("NotPermittedError", "Not permitted")
    package static let notSupported = avahi("NotSupportedError", "Not supported")
    package static let tooManyClients = avahi("TooManyClientsError", "Too many clients")
    package static let tooManyObjects = avahi("TooManyObjectsError", "Too many objects")
    package static let isEmpty = avahi("IsEmptyError", "Is empty")
    package static let noMemory = avahi("NoMemoryError", "Not enough memory")
    package static let noChange = avahi("NoChangeError", "The requested operation is invalid because redundant")
    /// The bus's own errors, for calls no Avahi object answers.
    package static func unknownMethod(_ member: String, _ interface: String) -> AvahiError {
        AvahiError(
            name: "org.freedesktop.DBus.Error.UnknownMethod",
            message: "Method \"\(member)\" with interface \"\(interface)\" is not implemented")
    }
    package static let accessDenied = AvahiError(
        name: "org.freedesktop.DBus.Error.AccessDenied", message: "Access denied")
    package static let invalidArguments = AvahiError(
        name: "org.freedesktop.DBus.Error.InvalidArgs", message: "Invalid arguments")

    /// The Avahi error for a dnssd status the sessions gave: NoAuth is NotPermitted, a name conflict a collision.
    package init(_ status: DNSServiceError) {
        switch status {
        case .noAuth, .notPermitted, .policyDenied, .refused: self = .notPermitted
        case .nameConflict: self = .collision
        case .badParam, .invalid: self = .invalidArgument
        case .badInterfaceIndex: self = .invalidInterface
        case .badFlags: self = .invalidFlags
        case .unsupported: self = .notSupported
        case .timeout: self = .timeout
        case .noMemory: self = .tooManyObjects
        case .noSuchName, .noSuchRecord: self = .notFound
        case .badState: self = .badState
        default: self = .failure
        }
    }
}
