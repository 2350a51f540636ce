import HeraldIPC

/// One object a client made through Avahi's API (a browser, a resolver, an entry group), at its own path. It
/// belongs to the connection that made it and goes with it.
final class AvahiObject {
    enum Kind: Equatable {
        case serviceBrowser
        case serviceTypeBrowser
        case serviceResolver
        case hostNameResolver
        case addressResolver
        case recordBrowser
        case domainBrowser
        case entryGroup
    }

    /// One service of an entry group, as added, and its registration once committed.
    struct GroupService {
        var interface: UInt32
        var name: String
        var type: String
        var domain: String
        var host: String
        var port: UInt16
        var txt: [UInt8]
        var subtypes: [String] = []
        var context: ClientContext?
        var registered = false
    }

    /// One record of an entry group (`AddAddress`, `AddRecord`), as added, and its registration once committed.
    struct GroupRecord {
        var request: RegisterRecordRequest
        var context: ClientContext?
        var registered = false
    }

    let kind: Kind
    let path: String
    let owner: AvahiFrontEnd.Client
    /// The interface and protocol the client asked for (Avahi's numbers).
    let interface: Int32
    let `protocol`: AvahiProtocol
    /// The request that starts the object's operation (browsers and resolvers), sent once it is started.
    var request: Request?
    /// The context of the object's main operation in the sessions, once started.
    var context: ClientContext?
    /// False for an object made by a `…Prepare` call until its `Start`.
    var started = false
    /// True while its operation waits for an operator's decision: nothing is signalled until it runs.
    var parked = false
    /// Set once `Failure` was signalled (or the object otherwise ended): nothing more is sent.
    var failed = false
    /// A `ResolveService` or `ResolveHostName` call waiting for this (hidden) object's first answer.
    var pendingCall: Int?

    // Resolvers.
    var name = ""
    var type = ""
    var domain = ""
    var addressProtocol = AvahiProtocol.unspecified
    var resolved: ResolveReply?
    var lookupContext: ClientContext?
    var found = false

    // Entry groups.
    var services: [GroupService] = []
    var records: [GroupRecord] = []
    var state = AvahiEntryGroupState.uncommitted

    init(kind: Kind, path: String, owner: AvahiFrontEnd.Client, interface: Int32, protocol: AvahiProtocol) {
        self.kind = kind
        self.path = path
        self.owner = owner
        self.interface = interface
        self.protocol = `protocol`
    }

    /// Every session context the object holds.
    var contexts: [ClientContext] {
        [context, lookupContext].compactMap { $0 } + services.compactMap(\.context) + records.compactMap(\.context)
    }

    /// The interface name of the object's kind.
    var interfaceName: String {
        switch kind {
        case .serviceBrowser: AvahiInterfaceSpec.serviceBrowserName
        case .serviceTypeBrowser: AvahiInterfaceSpec.serviceTypeBrowserName
        case .serviceResolver: AvahiInterfaceSpec.serviceResolverName
        case .hostNameResolver: AvahiInterfaceSpec.hostNameResolverName
        case .addressResolver: AvahiInterfaceSpec.addressResolverName
        case .recordBrowser: AvahiInterfaceSpec.recordBrowserName
        case .domainBrowser: AvahiInterfaceSpec.domainBrowserName
        case .entryGroup: AvahiInterfaceSpec.entryGroupName
        }
    }

    var spec: AvahiInterfaceSpec {
        switch kind {
        case .serviceBrowser: .serviceBrowser
        case .serviceTypeBrowser: .serviceTypeBrowser
        case .serviceResolver: .serviceResolver
        case .hostNameResolver: .hostNameResolver
        case .addressResolver: .addressResolver
        case .recordBrowser: .recordBrowser
        case .domainBrowser: .domainBrowser
        case .entryGroup: .entryGroup
        }
    }
}
