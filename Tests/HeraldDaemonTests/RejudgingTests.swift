import Foundation
import HeraldBroker
import HeraldSession
import HeraldWire
import Logging
import Testing

@testable import HeraldDaemon

/// Judging operations again after an operator's change: the broker works a caller out once for all of its
/// operations, and answers as it answers each alone.
@Suite("Re-judging in the permission broker")
struct RejudgingTests {
    @Test("decideAgain answers each request as decide does when judging again, before and after a grant")
    func decideAgainMatchesDecide() throws {
        let directory = try makeTemporaryDirectory("herald-rejudging")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try PermissionBroker(
            stateDirectory: directory,
            policy: PermissionPolicy(operatorRule: OperatorRule(groupID: nil)),
            logger: Logger(label: "test"))
        let manifest = try Manifest(
            id: "org.example.game", name: "Game", executables: ["/usr/bin/game"],
            bonjourServices: ["_game._tcp"], usageDescription: "Finds players.")
        try broker.register(manifest, by: "test")
        let game = CallerIdentity(pid: 4242, uid: 1000, groups: [1000], executablePath: "/usr/bin/game")
        let stranger = CallerIdentity(pid: 4343, uid: 1000, groups: [1000], executablePath: "/usr/bin/stranger")
        let requests: [PermissionRequest] = [
            .browse(try ServiceType("_game._tcp")), .browse(try ServiceType("_other._tcp")), .browseAllTypes,
            .addressLookup("printer.local."), .query(name: "printer.local.", type: .hinfo),
            .query(name: "www.example.com.", type: .a),
        ]
        func check(_ caller: CallerIdentity) -> [AccessDecision] {
            let together = broker.decideAgain(requests, for: caller)
            let alone = requests.map { broker.decide($0, for: caller, isNew: false) }
            #expect(together == alone, "\(caller)")
            return together
        }
        let before = check(game)
        #expect(before.map(Self.outcome) == ["park", "refuse", "refuse", "park", "refuse", "refuse"])
        #expect(check(stranger).map(Self.outcome) == ["refuse", "refuse", "refuse", "refuse", "refuse", "refuse"])
        try broker.decide(manifest.id, .granted, by: "test")
        #expect(check(game).map(Self.outcome) == ["allow", "refuse", "refuse", "allow", "refuse", "refuse"])
    }

    static func outcome(_ decision: AccessDecision) -> String {
        switch decision {
        case .allow: return "allow"
        case .refuse: return "refuse"
        case .park: return "park"
        }
    }
}
