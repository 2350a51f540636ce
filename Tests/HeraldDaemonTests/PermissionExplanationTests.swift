import Foundation
import HeraldBroker
@testable import HeraldDaemon
import HeraldWire
import Logging
import Testing

/// The broker keeps the last explanation given to each process, for the app that asks why it was refused. Apps
/// come and go by the thousand on a busy host: what is kept must not grow with them.
@Suite("Explanations kept for refused processes")
struct PermissionExplanationTests {
    @Test("the newest processes' explanations are kept, the oldest forgotten, however many are refused")
    func boundedAndRecent() throws {
        let directory = try makeTemporaryDirectory("herald-explanations")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try PermissionBroker(stateDirectory: directory,
                                          policy: PermissionPolicy(operatorRule: OperatorRule(groupID: nil)),
                                          logger: Logger(label: "test"))
        // Process ids far above pid_max: no such process, so no app manifest matches and the request is refused
        // or parked with a reason.
        let clients = (0..<2000).map { ClientIdentity(pid: Int32(50_000_000 + $0), uid: 65534, gid: 65534) }
        let request = GatedRequest.browse(try ServiceType("_soak._tcp"))
        for client in clients {
            let decision = broker.decide(request, for: client, isNew: true)
            if case .allow = decision { Issue.record("an unknown process was allowed") }
        }
        let kept = clients.filter { broker.explanation(for: $0) != nil }
        #expect(kept.count >= PermissionBroker.explanationsKept)
        #expect(kept.count <= 2 * PermissionBroker.explanationsKept)
        let newest = try #require(clients.last)
        #expect(broker.explanation(for: newest)?.isEmpty == false)
        #expect(Set(kept.map(\.pid)) == Set(clients.suffix(kept.count).map(\.pid)), "the newest are the ones kept")
    }
}
