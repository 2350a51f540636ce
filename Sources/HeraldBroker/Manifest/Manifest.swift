import HeraldWire

/// A validated app manifest (docs/permissions.md, "The app manifest"): who the app is, how its processes are
/// recognised, which service types it uses and why. Values of this type have passed every rule of
/// ``ManifestValidator``.
///
/// The file keys are: `id`, `name`, `executables`, `systemdUnits`, `executableSHA256`, `NSBonjourServices`,
/// `NSLocalNetworkUsageDescription`, `entitlements`.
package struct Manifest: Hashable, Sendable {
    /// The entitlement that unlocks browsing all service types, undeclared types and arbitrary record queries.
    package static let multicastEntitlement = "com.apple.developer.networking.multicast"
    /// The entitlements Herald knows.
    package static let knownEntitlements: Set<String> = [multicastEntitlement]

    /// `id`: the reverse-DNS identifier.
    package let id: AppID
    /// `name`: what people see in lists and prompts.
    package let name: String
    /// `executables`: absolute paths, compared with the kernel's record of a process's executable.
    package let executables: [String]
    /// `systemdUnits`: service or scope units (or service templates such as `game@.service`).
    package let systemdUnits: [String]
    /// `executableSHA256`: for some of `executables`, the only binary content accepted at that path.
    package let executableSHA256: [String: SHA256Digest]
    /// `NSBonjourServices`: the declared service types, plain (no subtype) and in `local.`.
    package let bonjourServices: [ServiceType]
    /// `NSLocalNetworkUsageDescription`: the sentence shown to operators; nil when the manifest has none.
    package let usageDescription: String?
    /// `entitlements`.
    package let entitlements: [String]

    init(
        id: AppID, name: String, executables: [String], systemdUnits: [String],
        executableSHA256: [String: SHA256Digest], bonjourServices: [ServiceType], usageDescription: String?,
        entitlements: [String]
    ) {
        self.id = id
        self.name = name
        self.executables = executables
        self.systemdUnits = systemdUnits
        self.executableSHA256 = executableSHA256
        self.bonjourServices = bonjourServices
        self.usageDescription = usageDescription
        self.entitlements = entitlements
    }

    /// Builds a manifest from values, checked by the same rules as a file; throws every problem found.
    package init(
        id: String, name: String, executables: [String] = [], systemdUnits: [String] = [],
        executableSHA256: [String: String] = [:], bonjourServices: [String] = [], usageDescription: String? = nil,
        entitlements: [String] = []
    ) throws(ManifestError) {
        func strings(_ values: [String]) -> ManifestDocument { .array(values.map(ManifestDocument.string)) }
        var entries: [ManifestDocument.Entry] = []
        func add(_ key: ManifestKey, _ value: ManifestDocument) {
            entries.append(.init(key: key.rawValue, value: value))
        }
        add(.id, .string(id))
        add(.name, .string(name))
        if !executables.isEmpty { add(.executables, strings(executables)) }
        if !systemdUnits.isEmpty { add(.systemdUnits, strings(systemdUnits)) }
        if !executableSHA256.isEmpty {
            add(
                .executableSHA256,
                .object(
                    executableSHA256.sorted { $0.key < $1.key }.map {
                        ManifestDocument.Entry(key: $0.key, value: .string($0.value))
                    }))
        }
        add(.bonjourServices, strings(bonjourServices))
        if let usageDescription { add(.usageDescription, .string(usageDescription)) }
        if !entitlements.isEmpty { add(.entitlements, strings(entitlements)) }
        self = try ManifestValidator.validate(.object(entries)).manifest
    }

    /// True when the manifest carries the multicast entitlement.
    package var hasMulticastEntitlement: Bool { entitlements.contains(Self.multicastEntitlement) }

    /// True when `type` (or, for a subtype, its parent type) is one of ``bonjourServices``, comparing the service
    /// name and transport ignoring case; the domain is not compared (the caller checks it is local).
    package func declares(_ type: ServiceType) -> Bool {
        bonjourServices.contains { Self.sameType($0, type) }
    }

    /// True when the two types have the same service name and transport, ignoring case, subtype and domain.
    static func sameType(_ a: ServiceType, _ b: ServiceType) -> Bool {
        a.transport == b.transport && a.name.lowercased() == b.name.lowercased()
    }
}

/// The keys of a manifest file.
package enum ManifestKey: String, CaseIterable, Sendable {
    case id
    case name
    case executables
    case systemdUnits
    case executableSHA256
    case bonjourServices = "NSBonjourServices"
    case usageDescription = "NSLocalNetworkUsageDescription"
    case entitlements
}
