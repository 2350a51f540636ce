/// Why a DNS-SD service type or service instance name was refused. Each case names the rule and
/// carries the offending text, so the description tells a person what to change.
public enum ServiceNameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is not a valid domain name (bad escape, empty or overlong label, name over 255 bytes).
    case invalidName(String, DNSNameError)
    /// The text does not have the shape of a service type at all.
    case notAServiceType(String)
    /// The service label does not start with an underscore (RFC 6763 §7).
    case missingUnderscore(String)
    /// The service name is empty (a lone `_`) (RFC 6335 §5.1).
    case emptyServiceName
    /// The service name does not fit in a label: more than 62 bytes after the underscore (RFC 1035 §2.3.4).
    case serviceNameTooLong(String)
    /// The service name contains something other than ASCII letters, digits, hyphens and underscores (RFC 6763
    /// §7 with RFC 6335 §5.1, less strictly: underscores as mDNSResponder accepts them).
    case invalidCharacter(String, character: String)
    /// The type stops after the service name, with no `_tcp` or `_udp` (RFC 6763 §7).
    case missingTransport(String)
    /// The label where the transport belongs is neither `_tcp` nor `_udp` (RFC 6763 §7).
    case invalidTransport(String)
    /// `_sub` with no subtype label in front of it (RFC 6763 §7.1).
    case missingSubtype(String)
    /// A subtype given as zero bytes (RFC 6763 §7.1).
    case emptySubtype
    /// A subtype label longer than 63 bytes (RFC 6763 §7.1, RFC 1035 §2.3.4).
    case subtypeTooLong(String, length: Int)
    /// The name is the service type enumeration name, not a service type (RFC 6763 §9).
    case serviceEnumerationName(String)
    /// The instance name is empty (RFC 6763 §4.1.1).
    case emptyInstance
    /// The instance name takes more than 63 bytes of UTF-8 (RFC 6763 §4.1.1, §7.2).
    case instanceTooLong(String, length: Int)
    /// The instance name contains an ASCII control character (RFC 6763 §4.1.1).
    case instanceControlCharacter(String)
    /// The instance label is not valid UTF-8 (RFC 6763 §4.1.1).
    case instanceNotUTF8(String)
    /// A full name with too few labels to hold an instance, a service name and a transport (RFC 6763 §4.1).
    case incompleteInstanceName(String)
    /// The instance part seems to contain dots that were not escaped; carries a corrected spelling.
    case unescapedDot(String, suggestion: String)
    /// An instance name was given a subtype as its type; instances belong to the plain type (RFC 6763 §7.1).
    case instanceTypeHasSubtype(String)

    public var description: String {
        switch self {
        case .invalidName(let text, let error):
            return "'\(text)' is not a valid name: \(error)"
        case .notAServiceType(let text):
            return "'\(text)' is not a service type: write it as '_name._tcp' or '_name._udp', optionally "
                + "followed by a domain (RFC 6763 §7)"
        case .missingUnderscore(let label):
            return "service name '\(label)' must start with an underscore, as in '_http._tcp' (RFC 6763 §7)"
        case .emptyServiceName:
            return "service name is empty: it needs at least one character after the underscore (RFC 6335 §5.1)"
        case .serviceNameTooLong(let name):
            return "service name '\(name)' has \(name.count) characters; a label holds at most 63 bytes, so at most "
                + "62 may follow the underscore (RFC 1035 §2.3.4, RFC 6763 §7)"
        case .invalidCharacter(let name, let character):
            return "service name '\(name)' may contain only letters, digits, hyphens and underscores (RFC 6335 "
                + "§5.1); '\(character)' is not allowed"
        case .missingTransport(let text):
            return "'\(text)' has no transport: add '._tcp' or '._udp' after the service name (RFC 6763 §7)"
        case .invalidTransport(let label):
            return "'\(label)' is not a transport: the label after the service name must be '_tcp' or '_udp' "
                + "(RFC 6763 §7)"
        case .missingSubtype(let text):
            return "'\(text)' has '_sub' with no subtype in front of it: write '_subtype._sub._name._tcp' "
                + "(RFC 6763 §7.1)"
        case .emptySubtype:
            return "a subtype label must not be empty (RFC 6763 §7.1)"
        case .subtypeTooLong(let label, let length):
            return "subtype '\(label)' has \(length) bytes; a label holds at most 63 (RFC 6763 §7.1)"
        case .serviceEnumerationName(let text):
            return "'\(text)' is the service type enumeration name (RFC 6763 §9), not a service type"
        case .emptyInstance:
            return "a service instance name must not be empty (RFC 6763 §4.1.1)"
        case .instanceTooLong(let instance, let length):
            return "instance name '\(instance)' takes \(length) bytes in UTF-8; at most 63 are allowed "
                + "(RFC 6763 §4.1.1, §7.2)"
        case .instanceControlCharacter(let instance):
            return "instance name '\(instance)' must not contain control characters (RFC 6763 §4.1.1)"
        case .instanceNotUTF8(let instance):
            return "instance name '\(instance)' is not valid UTF-8 (RFC 6763 §4.1.1)"
        case .incompleteInstanceName(let text):
            return "'\(text)' is not a service instance name: it needs an instance, a service name and a "
                + "transport, as in 'My Printer._ipp._tcp.local.' (RFC 6763 §4.1)"
        case .unescapedDot(let text, let suggestion):
            return "'\(text)' does not have '_tcp' or '_udp' as its third label; if the instance name contains "
                + "dots, escape them as '\\.': '\(suggestion)' (RFC 6763 §4.3)"
        case .instanceTypeHasSubtype(let type):
            return "an instance belongs to a plain service type, not to the subtype '\(type)' (RFC 6763 §7.1)"
        }
    }
}

/// Where an accepted service name breaks RFC 6335 §5.1's rules for names registered with IANA. Avahi and
/// mDNSResponder accept such names (mDNSResponder logs the length); Herald accepts them and says so.
public enum ServiceNameWarning: Hashable, Sendable, CustomStringConvertible {
    /// More than 15 characters.
    case longerThanRegistrable(String)
    /// An underscore inside the name.
    case underscore(String)
    /// Digits and hyphens only.
    case noLetter(String)
    /// A hyphen at the beginning or the end.
    case hyphenAtEnd(String)
    /// Two hyphens in a row.
    case consecutiveHyphens(String)

    public var description: String {
        switch self {
        case .longerThanRegistrable(let name):
            return "service name '\(name)' has \(name.count) characters, more than the 15 a name registered with IANA "
                + "may have (RFC 6335 §5.1); accepted, as Avahi and mDNSResponder accept it"
        case .underscore(let name):
            return "service name '\(name)' contains an underscore, which RFC 6335 §5.1 does not allow in registered "
                + "names; accepted, as Avahi and mDNSResponder accept it"
        case .noLetter(let name):
            return "service name '\(name)' has no letter, which RFC 6335 §5.1 asks of registered names; accepted"
        case .hyphenAtEnd(let name):
            return "service name '\(name)' begins or ends with a hyphen, which RFC 6335 §5.1 does not allow in "
                + "registered names; accepted"
        case .consecutiveHyphens(let name):
            return "service name '\(name)' has two hyphens in a row, which RFC 6335 §5.1 does not allow in "
                + "registered names; accepted"
        }
    }
}
