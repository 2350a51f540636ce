import HeraldEngine
import HeraldWire

/// A failure as the protocol reports it: a negative Avahi error number and its text. libnss-mdns reads any
/// line that does not start with `+` as "not found".
package enum NSSFailure: Hashable, Sendable {
    /// Nothing answered in time, or the lookup was not permitted (a refusal looks exactly like a miss).
    case timeout
    case invalidHostName
    case invalidAddress
    /// An unknown or malformed command, or a line too long.
    case invalidOperation
    case tooManyClients
    case tooManyObjects
    /// A command Herald does not offer (`BROWSE-DNS-SERVERS`).
    case notSupported

    /// Avahi's error number (avahi-common/error.h).
    package var code: Int {
        switch self {
        case .timeout: return -15
        case .invalidHostName: return -3
        case .invalidAddress: return -14
        case .invalidOperation: return -21
        case .tooManyClients: return -16
        case .tooManyObjects: return -17
        case .notSupported: return -32
        }
    }

    package var text: String {
        switch self {
        case .timeout: return "Timeout reached"
        case .invalidHostName: return "Invalid host name"
        case .invalidAddress: return "Invalid address"
        case .invalidOperation: return "Invalid operation"
        case .tooManyClients: return "Too many clients"
        case .tooManyObjects: return "Too many objects"
        case .notSupported: return "Not supported"
        }
    }
}

/// A reply line of the libnss-mdns protocol.
package enum NSSReply: Hashable, Sendable {
    /// `+ INTERFACE PROTOCOL NAME ADDRESS`: a host name's address, seen on an interface over IPv4 (0) or IPv6 (1).
    case hostAddress(interfaceIndex: Int, protocol: IPFamily, name: DNSName, address: IPAddress)
    /// `+ INTERFACE PROTOCOL NAME`: the host name of an address.
    case addressName(interfaceIndex: Int, protocol: IPFamily, name: DNSName)
    /// `-CODE TEXT`
    case failure(NSSFailure)
    /// The `HELP` text, every line starting with `+`.
    case help

    /// The reply as sent, newline included.
    package var text: String {
        switch self {
        case .hostAddress(let interface, let family, let name, let address):
            return "+ \(interface) \(Self.number(of: family)) \(Self.field(name)) \(address)\n"
        case .addressName(let interface, let family, let name):
            return "+ \(interface) \(Self.number(of: family)) \(Self.field(name))\n"
        case .failure(let failure):
            return "\(failure.code) \(failure.text)\n"
        case .help:
            return """
                + Available commands are:
                +      RESOLVE-HOSTNAME <hostname>
                +      RESOLVE-HOSTNAME-IPV6 <hostname>
                +      RESOLVE-HOSTNAME-IPV4 <hostname>
                +      RESOLVE-ADDRESS <address>

                """
        }
    }

    /// Whether this is a positive answer.
    package var isFound: Bool {
        switch self {
        case .hostAddress, .addressName: return true
        case .failure, .help: return false
        }
    }

    /// Avahi's protocol numbers: 0 for IPv4, 1 for IPv6.
    static func number(of family: IPFamily) -> Int { family == .ipv4 ? 0 : 1 }

    /// A name as one blank-free field: presentation form without the trailing dot, blanks written as `\032`
    /// and `\009` (libnss-mdns splits the reply at blanks).
    static func field(_ name: DNSName) -> String {
        var text = name.description
        if text.count > 1, text.hasSuffix(".") { text.removeLast() }
        var field = ""
        for character in text {
            switch character {
            case " ": field += "\\032"
            case "\t": field += "\\009"
            default: field.append(character)
            }
        }
        return field
    }
}
