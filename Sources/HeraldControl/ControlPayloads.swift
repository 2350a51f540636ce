#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A registered app as operators see it.
public struct ControlApp: Codable, Hashable, Sendable {
    public var id: String
    public var name: String
    /// `granted`, `denied` or `not-determined`.
    public var decision: String
    public var decidedBy: String?
    public var decidedAt: Date?
    public var executables: [String]
    public var systemdUnits: [String]
    public var pinnedExecutables: [String]
    public var serviceTypes: [String]
    public var usageDescription: String?
    public var entitlements: [String]
    public var addedAt: Date
    public var updatedAt: Date
    /// Pending requests of this app.
    public var pendingRequests: Int
    /// Packets of the app the kernel rules held back since heraldd started; nil when they are off.
    public var blockedPackets: Int?
    /// Where the latest of them went (in the last minutes); nil when none did.
    public var lastBlockedDestination: String?

    public init(
        id: String, name: String, decision: String, decidedBy: String?, decidedAt: Date?, executables: [String],
        systemdUnits: [String], pinnedExecutables: [String], serviceTypes: [String], usageDescription: String?,
        entitlements: [String], addedAt: Date, updatedAt: Date, pendingRequests: Int, blockedPackets: Int? = nil,
        lastBlockedDestination: String? = nil
    ) {
        self.id = id
        self.name = name
        self.decision = decision
        self.decidedBy = decidedBy
        self.decidedAt = decidedAt
        self.executables = executables
        self.systemdUnits = systemdUnits
        self.pinnedExecutables = pinnedExecutables
        self.serviceTypes = serviceTypes
        self.usageDescription = usageDescription
        self.entitlements = entitlements
        self.addedAt = addedAt
        self.updatedAt = updatedAt
        self.pendingRequests = pendingRequests
        self.blockedPackets = blockedPackets
        self.lastBlockedDestination = lastBlockedDestination
    }

    /// An upper bound of the length of the app as JSON, for paging.
    public var encodedLengthBound: Int {
        ControlProtocol.encodedLengthBound(
            [id, name, decision, decidedBy, usageDescription] + executables
                + systemdUnits + pinnedExecutables + serviceTypes + entitlements)
    }
}

/// A request an app made while not yet decided.
public struct ControlPendingRequest: Codable, Hashable, Sendable {
    public var app: String
    public var appName: String
    public var usageDescription: String
    /// `browse`, `resolve`, `register`, `query`, `address-lookup`, `browse-all-types`.
    public var operation: String
    public var serviceType: String?
    /// What was asked for: the type, instance or name; `address lookups` for all of an app's address lookups.
    public var subject: String
    /// For an app's address lookups, folded into one request: the latest name asked for.
    public var latestSubject: String?
    public var firstSeen: Date
    public var lastSeen: Date
    public var count: Int

    public init(
        app: String, appName: String, usageDescription: String, operation: String, serviceType: String?,
        subject: String, latestSubject: String? = nil, firstSeen: Date, lastSeen: Date, count: Int
    ) {
        self.app = app
        self.appName = appName
        self.usageDescription = usageDescription
        self.operation = operation
        self.serviceType = serviceType
        self.subject = subject
        self.latestSubject = latestSubject
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.count = count
    }

    /// An upper bound of the length of the request as JSON, for paging.
    public var encodedLengthBound: Int {
        ControlProtocol.encodedLengthBound([
            app, appName, usageDescription, operation, serviceType, subject,
            latestSubject,
        ])
    }
}

/// One line of the audit trail.
public struct ControlAuditLine: Codable, Hashable, Sendable {
    public var sequence: Int64
    public var time: Date
    public var app: String?
    public var operation: String
    public var serviceType: String?
    public var decision: String
    public var reason: String
    public var detail: String
    /// The caller's uid, for decisions on requests.
    public var uid: UInt32?
    /// How many decisions the line stands for, when more than one: a line of operation `folded` counts one user's
    /// decisions of one reason within a window, past those written one by one.
    public var count: Int?

    public init(
        sequence: Int64, time: Date, app: String?, operation: String, serviceType: String?, decision: String,
        reason: String, detail: String, uid: UInt32? = nil, count: Int? = nil
    ) {
        self.sequence = sequence
        self.time = time
        self.app = app
        self.operation = operation
        self.serviceType = serviceType
        self.decision = decision
        self.reason = reason
        self.detail = detail
        self.uid = uid
        self.count = count
    }

    /// An upper bound of the length of the line as JSON, for paging.
    public var encodedLengthBound: Int {
        ControlProtocol.encodedLengthBound([app, operation, serviceType, decision, reason, detail])
    }
}

/// What the daemon is doing.
public struct ControlStatus: Codable, Hashable, Sendable {
    public struct Interface: Codable, Hashable, Sendable {
        public var name: String
        public var index: Int
        public var addresses: [String]
        /// The interface's MTU: messages with several records fit in it (RFC 6762 §17). Nil from a daemon of a
        /// release that did not report it (a newer herald talking to an older heraldd during an upgrade).
        public var mtu: Int?
        public var cachedRecords: Int

        public init(name: String, index: Int, addresses: [String], mtu: Int?, cachedRecords: Int) {
            self.name = name
            self.index = index
            self.addresses = addresses
            self.mtu = mtu
            self.cachedRecords = cachedRecords
        }
    }

    public var version: String
    public var hostName: String
    public var uptimeSeconds: Int
    public var interfaces: [Interface]
    public var cachedRecords: Int
    /// Records the cache dropped because it was full since the daemon started (evicted to make room, or newcomers
    /// refused), and the most it keeps per link. Nil from a daemon of a release that did not report them.
    public var droppedRecords: Int?
    public var cacheLimitPerLink: Int?
    public var clients: Int
    public var operations: Int
    public var parkedOperations: Int
    public var registrations: Int
    public var staticServices: Int
    public var apps: Int
    public var grantedApps: Int
    public var deniedApps: Int
    public var pendingRequests: Int
    public var packetsReceived: Int
    public var packetsSent: Int
    public var malformedPackets: Int
    public var conflicts: Int
    /// Unicast replies to the daemon's QU questions that it accepted.
    public var unicastResponsesReceived: Int
    /// The daemon's resident set (VmRSS), in KiB.
    public var residentKiB: Int
    /// Memory the daemon has allocated and not freed (its live heap), in KiB: what a leak would grow. The resident
    /// set also counts mapped code and what the allocator keeps after frees.
    public var heapInUseKiB: Int
    /// Kernel enforcement of local-network access; nil from a daemon of a release without it.
    public var enforcement: Enforcement?

    /// What the kernel rules enforce (docs/enforcement.md).
    public struct Enforcement: Codable, Hashable, Sendable {
        /// `off`, `registered` or `all`.
        public var mode: String
        /// True when a clean stop leaves every app held back.
        public var failClosed: Bool
        /// Registered apps whose cgroups the rules hold back (not granted), and those they let through.
        public var appsHeldBack: Int
        public var appsGranted: Int
        /// Cgroups named by the rules (apps' and exempted units').
        public var cgroups: Int
        /// Times the rules were replaced since heraldd started.
        public var updates: Int
        /// Why the last update failed, when it did (the rules before it stay in force).
        public var lastError: String?
        /// Whether incoming multicast and broadcast are held back, at how many cgroups, or why not.
        public var ingress: String?
        /// Whether sockets made before their process moved into a held-back cgroup are judged by the process, or
        /// why not.
        public var movedSockets: String?

        public init(
            mode: String, failClosed: Bool, appsHeldBack: Int, appsGranted: Int, cgroups: Int, updates: Int,
            lastError: String?, ingress: String? = nil, movedSockets: String? = nil
        ) {
            self.mode = mode
            self.failClosed = failClosed
            self.appsHeldBack = appsHeldBack
            self.appsGranted = appsGranted
            self.cgroups = cgroups
            self.updates = updates
            self.lastError = lastError
            self.ingress = ingress
            self.movedSockets = movedSockets
        }
    }

    public init(
        version: String, hostName: String, uptimeSeconds: Int, interfaces: [Interface], cachedRecords: Int,
        clients: Int, operations: Int, parkedOperations: Int, registrations: Int, staticServices: Int, apps: Int,
        grantedApps: Int, deniedApps: Int, pendingRequests: Int, packetsReceived: Int, packetsSent: Int,
        malformedPackets: Int, conflicts: Int, unicastResponsesReceived: Int = 0, residentKiB: Int = 0,
        heapInUseKiB: Int = 0, droppedRecords: Int? = nil, cacheLimitPerLink: Int? = nil,
        enforcement: Enforcement? = nil
    ) {
        self.version = version
        self.hostName = hostName
        self.uptimeSeconds = uptimeSeconds
        self.interfaces = interfaces
        self.cachedRecords = cachedRecords
        self.clients = clients
        self.operations = operations
        self.parkedOperations = parkedOperations
        self.registrations = registrations
        self.staticServices = staticServices
        self.apps = apps
        self.grantedApps = grantedApps
        self.deniedApps = deniedApps
        self.pendingRequests = pendingRequests
        self.packetsReceived = packetsReceived
        self.packetsSent = packetsSent
        self.malformedPackets = malformedPackets
        self.conflicts = conflicts
        self.unicastResponsesReceived = unicastResponsesReceived
        self.residentKiB = residentKiB
        self.heapInUseKiB = heapInUseKiB
        self.droppedRecords = droppedRecords
        self.cacheLimitPerLink = cacheLimitPerLink
        self.enforcement = enforcement
    }
}
