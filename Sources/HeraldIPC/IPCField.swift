/// The fields of IPC messages, named in decoding and encoding errors.
public enum IPCField: String, Hashable, Sendable, CustomStringConvertible {
    case header
    case errorReturnPath = "error-return path"
    case flags
    case interfaceIndex = "interface index"
    case error = "error code"
    case name
    case regtype = "service type"
    case domain
    case host
    case hostTarget = "target host"
    case port
    case txtLength = "TXT length"
    case txtRecord = "TXT record"
    case fullname = "full name"
    case hostname = "host name"
    case rrtype = "record type"
    case rrclass = "record class"
    case rdataLength = "rdata length"
    case rdata
    case ttl = "TTL"
    case `protocol`
    case property = "property name"
    case status
    case propertyLength = "property length"
    case propertyValue = "property value"

    public var description: String { rawValue }
}
