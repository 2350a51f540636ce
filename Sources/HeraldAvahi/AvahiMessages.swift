/// What the front end of Avahi's API takes in and gives out, as values the bus shell reads and writes.

/// A method call, as the bus delivered it.
package struct AvahiCall: Hashable, Sendable {
    /// The caller's unique bus name (`:1.42`).
    package var sender: String
    package var path: String
    /// Empty when the call named no interface.
    package var interface: String
    package var member: String
    package var arguments: [DBusValue]

    package init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue] = []) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// The answer to a call.
package enum AvahiCallResult: Hashable, Sendable {
    /// A method return with these arguments.
    case reply([DBusValue])
    case error(AvahiError)
    /// The answer comes later (`ResolveService` waits for the service): ``AvahiFrontEnd/takeDeferredReplies()``.
    case later
}

/// A signal for the client that owns the object it comes from (Avahi sends its signals to their owner alone), or
/// for every client (the server's `StateChanged`, whose destination is empty).
package struct AvahiSignal: Hashable, Sendable, CustomStringConvertible {
    package var destination: String
    package var path: String
    package var interface: String
    package var member: String
    package var arguments: [DBusValue]

    package var description: String {
        "\(path) \(member)(\(arguments.map(\.description).joined(separator: ", "))) → \(destination)"
    }
}

/// The late answer of a call that was answered ``AvahiCallResult/later``; `call` is the token the shell gave it.
package struct AvahiDeferredReply: Hashable, Sendable {
    package var call: Int
    package var result: AvahiCallResult
}

/// What the front end needs to know about the host, answered by the daemon.
package protocol AvahiHostFacts: AnyObject {
    /// The host name's first label, as published (`myhost`).
    var hostLabel: String { get }
    /// The cookie `GetLocalServiceCookie` answers: a number fixed for the daemon's run.
    var localServiceCookie: UInt32 { get }
    /// True when `.local` names resolve through NSS (heraldd serves libnss-mdns's socket).
    var nssSupportAvailable: Bool { get }
    func interfaceName(ofIndex index: Int32) -> String?
    func interfaceIndex(ofName name: String) -> Int32?
}
