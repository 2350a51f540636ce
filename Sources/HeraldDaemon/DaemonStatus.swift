import HeraldBroker
import HeraldConfig
import HeraldControl
import HeraldEngine
import HeraldWire

extension Daemon {
    /// The daemon's version, as `status` reports it.
    package static let version = "0.9.0"
}

/// `herald status`: what the daemon is doing, gathered from its parts (built before the control socket that asks).
struct DaemonStatusReport {
    let network: NetworkService
    let appSocket: AppSocketServer
    let broker: PermissionBroker
    let staticServices: StaticServicePublisher
    let enforcement: EnforcerSlot
    let startedAt: Int64

    func status() -> ControlStatus {
        let engine = network.engine
        let interfaces = network.interfaces.values.sorted { $0.index < $1.index }.map { interface in
            ControlStatus.Interface(
                name: interface.name, index: interface.index,
                addresses: interface.addresses.map { "\($0.address)/\($0.prefixLength)" }.sorted(), mtu: interface.mtu,
                cachedRecords: IPFamily.allCases.reduce(0) {
                    $0 + engine.cachedRecordCount(on: LinkID(interfaceIndex: interface.index, family: $1))
                })
        }
        let counts = appSocket.operationCounts
        let snapshot = broker.snapshot
        let decisions = snapshot.registry.manifests.map { snapshot.decision(for: $0.id) }
        let pending = (try? broker.store.pendingRequests().count) ?? 0
        let enforcement: ControlStatus.Enforcement =
            enforcement.enforcer?.status
            ?? ControlStatus.Enforcement(
                mode: "off", failClosed: false, appsHeldBack: 0, appsGranted: 0, cgroups: 0, updates: 0,
                lastError: nil)
        return ControlStatus(
            version: Daemon.version, hostName: engine.hostName.description,
            uptimeSeconds: Int((MonotonicClock.milliseconds() - startedAt) / 1000), interfaces: interfaces,
            cachedRecords: interfaces.reduce(0) { $0 + $1.cachedRecords }, clients: appSocket.clientCount,
            operations: counts.operations, parkedOperations: counts.parked, registrations: counts.registrations,
            staticServices: staticServices.count, apps: snapshot.registry.manifests.count,
            grantedApps: decisions.filter { $0 == .granted }.count,
            deniedApps: decisions.filter { $0 == .denied }.count,
            pendingRequests: pending, packetsReceived: engine.statistics.packetsReceived,
            packetsSent: engine.statistics.packetsSent, malformedPackets: engine.statistics.malformedPackets,
            conflicts: engine.statistics.conflicts,
            unicastResponsesReceived: engine.statistics.unicastResponsesReceived,
            residentKiB: ProcessMemory.residentKiB(), heapInUseKiB: ProcessMemory.heapInUseKiB(),
            droppedRecords: engine.cacheRecordsDroppedWhenFull,
            cacheLimitPerLink: engine.configuration.cacheLimitPerLink, enforcement: enforcement)
    }
}

/// Where the daemon keeps its kernel enforcer, which is made after the status report that shows it.
final class EnforcerSlot {
    var enforcer: KernelEnforcer?
}
