import ArgumentParser
import HeraldControl

/// `herald status`: what the daemon is doing.
struct Status: HeraldCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the daemon's interfaces, addresses, cache, clients, operations, registrations, apps, "
            + "pending requests and memory (operators only).")

    @OptionGroup var options: ControlOptions

    var label: String { "status" }

    func execute() throws {
        guard let status = try ControlSession(options: options).call(.status).status else { return }
        if options.json {
            ControlOutput.json(status)
            return
        }
        StandardOutput.line("heraldd \(status.version), host name \(status.hostName), up \(status.uptimeSeconds) s")
        var table = Table(titles: ["INTERFACE", "INDEX", "MTU", "CACHED", "ADDRESSES"])
        for interface in status.interfaces {
            table.append([
                interface.name, String(interface.index), interface.mtu.map(String.init) ?? "-",
                String(interface.cachedRecords),
                interface.addresses.joined(separator: " "),
            ])
        }
        table.print()
        var cache = "cached records: \(status.cachedRecords)"
        if let dropped = status.droppedRecords, let limit = status.cacheLimitPerLink {
            cache += " (at most \(limit) per interface and family; \(dropped) dropped because the cache was full)"
        }
        StandardOutput.line(cache)
        StandardOutput.line(
            "clients: \(status.clients), operations: \(status.operations) "
                + "(\(status.parkedOperations) waiting for permission), registrations: \(status.registrations), "
                + "static services: \(status.staticServices)")
        StandardOutput.line(
            "apps: \(status.apps) (\(status.grantedApps) granted, \(status.deniedApps) denied), "
                + "pending requests: \(status.pendingRequests)")
        if let enforcement = status.enforcement {
            StandardOutput.line(Self.describe(enforcement))
        }
        StandardOutput.line(
            "packets: \(status.packetsReceived) received (\(status.malformedPackets) malformed, "
                + "\(status.unicastResponsesReceived) unicast replies), \(status.packetsSent) sent; "
                + "conflicts: \(status.conflicts)")
        StandardOutput.line(
            "memory: \(Self.mebibytes(status.residentKiB)) resident, "
                + "\(Self.mebibytes(status.heapInUseKiB)) heap in use")
    }

    /// `enforcement: registered (fail-open), 1 app held back, 2 granted, 3 cgroups, 4 updates`.
    static func describe(_ enforcement: ControlStatus.Enforcement) -> String {
        guard enforcement.mode != "off" else { return "enforcement: off (the kernel lets every app reach the LAN)" }
        var text =
            "enforcement: \(enforcement.mode) (\(enforcement.failClosed ? "fail-closed" : "fail-open")), "
            + "\(enforcement.appsHeldBack) apps held back, \(enforcement.appsGranted) granted, "
            + "\(enforcement.cgroups) cgroups, \(enforcement.updates) updates"
        if let ingress = enforcement.ingress { text += "; \(ingress)" }
        if let moved = enforcement.movedSockets { text += "; \(moved)" }
        if let error = enforcement.lastError { text += "; last update failed: \(error)" }
        return text
    }

    /// `21.4 MiB`.
    static func mebibytes(_ kibibytes: Int) -> String {
        let tenths = (kibibytes * 10 + 512) / 1024
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
