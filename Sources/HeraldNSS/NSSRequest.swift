import HeraldEngine
import HeraldWire

/// Which addresses a host-name request wants.
package enum NSSAddressFamilies: Hashable, Sendable {
    /// `RESOLVE-HOSTNAME-IPV4`
    case ipv4
    /// `RESOLVE-HOSTNAME-IPV6`
    case ipv6
    /// `RESOLVE-HOSTNAME`: whichever answers first (IPv4 preferred when both are known).
    case any

    /// Whether an address of `family` answers the request.
    package func accepts(_ family: IPFamily) -> Bool {
        switch self {
        case .ipv4: return family == .ipv4
        case .ipv6: return family == .ipv6
        case .any: return true
        }
    }
}

/// One request line of the text protocol that libnss-mdns speaks to Avahi's socket: a command and at most
/// one argument, separated by blanks, ended by a newline. One request per connection.
package enum NSSRequest: Hashable, Sendable {
    /// `RESOLVE-HOSTNAME[-IPV4|-IPV6] NAME`: the addresses of a host name.
    case resolveHostName(DNSName, NSSAddressFamilies)
    /// `RESOLVE-ADDRESS ADDRESS`: the host name of an address (its reverse PTR record).
    case resolveAddress(IPAddress)
    /// `HELP`: the list of commands.
    case help
    /// `BROWSE-DNS-SERVERS[-IPV4|-IPV6]`: Avahi's unicast DNS server browsing, which Herald does not do.
    case browseDNSServers

    /// The longest request line accepted, newline excluded: a command and the longest name in presentation form.
    package static let maximumLineLength = 1100

    /// Parses one line (without its newline; a trailing carriage return is ignored).
    package init(line: some Collection<UInt8>) throws(NSSRequestError) {
        var bytes = Array(line)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count <= Self.maximumLineLength else { throw .lineTooLong }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let command = words.first else { throw .empty }
        let arguments = Array(words.dropFirst())
        func argument() throws(NSSRequestError) -> String {
            guard arguments.count == 1 else { throw .wrongArgumentCount(command: command, expected: 1) }
            return arguments[0]
        }
        func noArguments() throws(NSSRequestError) {
            guard arguments.isEmpty else { throw .wrongArgumentCount(command: command, expected: 0) }
        }
        switch command {
        case "RESOLVE-HOSTNAME": self = .resolveHostName(try Self.hostName(try argument()), .any)
        case "RESOLVE-HOSTNAME-IPV4": self = .resolveHostName(try Self.hostName(try argument()), .ipv4)
        case "RESOLVE-HOSTNAME-IPV6": self = .resolveHostName(try Self.hostName(try argument()), .ipv6)
        case "RESOLVE-ADDRESS":
            let text = try argument()
            guard let address = IPAddress(text) else { throw .badAddress(text) }
            self = .resolveAddress(address)
        case "HELP":
            try noArguments()
            self = .help
        case "BROWSE-DNS-SERVERS", "BROWSE-DNS-SERVERS-IPV4", "BROWSE-DNS-SERVERS-IPV6":
            try noArguments()
            self = .browseDNSServers
        default:
            throw .unknownCommand(command)
        }
    }

    private static func hostName(_ text: String) throws(NSSRequestError) -> DNSName {
        do {
            let name = try DNSName(text)
            guard !name.isRoot else { throw NSSRequestError.badHostName(text) }
            return name
        } catch {
            throw .badHostName(text)
        }
    }
}

/// Why a request line was refused.
package enum NSSRequestError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case lineTooLong
    case notText
    case unknownCommand(String)
    case wrongArgumentCount(command: String, expected: Int)
    case badHostName(String)
    case badAddress(String)

    package var description: String {
        switch self {
        case .empty: return "empty request"
        case .lineTooLong: return "request line longer than \(NSSRequest.maximumLineLength) bytes"
        case .notText: return "request is not UTF-8 text"
        case .unknownCommand(let command): return "unknown command \"\(command.prefix(64))\""
        case .wrongArgumentCount(let command, let expected):
            return "\(command) takes \(expected == 0 ? "no argument" : "exactly one argument")"
        case .badHostName(let text): return "\"\(text.prefix(64))\" is not a host name"
        case .badAddress(let text): return "\"\(text.prefix(64))\" is not an IPv4 or IPv6 address"
        }
    }

    /// The failure reply a client gets for this error.
    package var reply: NSSReply {
        switch self {
        case .badHostName: return .failure(.invalidHostName)
        case .badAddress: return .failure(.invalidAddress)
        default: return .failure(.invalidOperation)
        }
    }
}
