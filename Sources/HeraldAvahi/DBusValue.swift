/// One D-Bus argument of the kinds Avahi's API uses, as a value: what the bus shell reads from a call and appends
/// to a reply or a signal.
package enum DBusValue: Hashable, Sendable, CustomStringConvertible {
    case int32(Int32)
    case uint32(UInt32)
    case uint16(UInt16)
    case boolean(Bool)
    case string(String)
    case objectPath(String)
    /// `ay`.
    case bytes([UInt8])
    /// `aay`: a TXT record's strings.
    case byteArrays([[UInt8]])

    /// The value's D-Bus type signature.
    package var signature: String {
        switch self {
        case .int32: "i"
        case .uint32: "u"
        case .uint16: "q"
        case .boolean: "b"
        case .string: "s"
        case .objectPath: "o"
        case .bytes: "ay"
        case .byteArrays: "aay"
        }
    }

    package var description: String {
        switch self {
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)u"
        case .uint16(let v): "\(v)q"
        case .boolean(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): v
        case .bytes(let v): "\(v.count) bytes"
        case .byteArrays(let v): "\(v.count) strings"
        }
    }

    /// The signature of a whole argument list.
    package static func signature(of values: [DBusValue]) -> String { values.map(\.signature).joined() }
}

/// A call's arguments read in order, each of the type its method's signature gives.
package struct DBusArguments {
    private let values: [DBusValue]
    private var next = 0

    package init(_ values: [DBusValue]) { self.values = values }

    private mutating func take() -> DBusValue? {
        guard next < values.count else { return nil }
        defer { next += 1 }
        return values[next]
    }

    package mutating func int32() throws(AvahiError) -> Int32 {
        guard case .int32(let value) = take() else { throw .invalidArguments }
        return value
    }
    package mutating func uint32() throws(AvahiError) -> UInt32 {
        guard case .uint32(let value) = take() else { throw .invalidArguments }
        return value
    }
    package mutating func uint16() throws(AvahiError) -> UInt16 {
        guard case .uint16(let value) = take() else { throw .invalidArguments }
        return value
    }
    package mutating func string() throws(AvahiError) -> String {
        guard case .string(let value) = take() else { throw .invalidArguments }
        return value
    }
    package mutating func bytes() throws(AvahiError) -> [UInt8] {
        guard case .bytes(let value) = take() else { throw .invalidArguments }
        return value
    }
    package mutating func byteArrays() throws(AvahiError) -> [[UInt8]] {
        guard case .byteArrays(let value) = take() else { throw .invalidArguments }
        return value
    }
    /// Nothing may follow the arguments read.
    package func end() throws(AvahiError) {
        guard next == values.count else { throw .invalidArguments }
    }
}
