/// A service to advertise: what ``Herald/register(_:)`` publishes.
public struct ServiceAdvertisement: Hashable, Sendable {
    /// The instance name; nil lets the daemon pick one (the host's name). After a name conflict the daemon
    /// renames the service, and the registration reports the name finally used.
    public var name: String?
    /// The service type, such as `_tictactoe._tcp`.
    public var type: String
    /// Subtypes to be found under too, such as `_printer`.
    public var subtypes: [String]
    /// The port the service listens on.
    public var port: UInt16
    /// The TXT attributes to publish (an empty dictionary publishes the single empty string).
    public var txt: TXTDictionary
    /// The domain (`local.`).
    public var domain: String
    /// 0 for every interface, else the index of the one interface to advertise on.
    public var interfaceIndex: UInt32
    /// When false, a name conflict fails the registration instead of renaming it.
    public var renameOnConflict: Bool

    /// A service to advertise; only the type and the port are required.
    public init(
        name: String? = nil, type: String, port: UInt16, txt: TXTDictionary = [:], subtypes: [String] = [],
        domain: String = "local.", interfaceIndex: UInt32 = 0, renameOnConflict: Bool = true
    ) {
        self.name = name
        self.type = type
        self.subtypes = subtypes
        self.port = port
        self.txt = txt
        self.domain = domain
        self.interfaceIndex = interfaceIndex
        self.renameOnConflict = renameOnConflict
    }
}
