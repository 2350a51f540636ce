import Foundation
import HeraldBroker
import HeraldSession
import HeraldWire
import Logging
import Testing

@testable import HeraldDaemon

/// A caller repeating itself must not fill the audit log: each decision is written once a minute at most.
@Suite("Repeated decisions in the audit log")
struct AuditRepeatsTests {
    func event(_ type: String) -> AuditEvent {
        AuditEvent(
            app: nil, operation: "browse", serviceType: type, decision: "refuse", reason: "unregistered",
            detail: "browse \(type) by uid 65534")
    }

    @Test("a decision is written, its repeats within a minute are not, and the next after the minute is")
    func window() {
        var repeats = AuditRepeats()
        let start = ContinuousClock.now
        func written(_ type: String, after seconds: Int64) -> Bool {
            repeats.shouldWrite(event(type), at: start + .seconds(seconds))
        }
        let decisions = [
            written("_a._tcp", after: 0), written("_a._tcp", after: 59), written("_b._tcp", after: 59),
            written("_a._tcp", after: 60), written("_a._tcp", after: 61),
        ]
        #expect(decisions == [true, false, true, true, false])
    }

    @Test("however many distinct decisions come, a bounded number is remembered")
    func bounded() {
        var repeats = AuditRepeats()
        let start = ContinuousClock.now
        var written = 0
        var most = 0
        for n in 0..<(3 * AuditRepeats.remembered) {
            if repeats.shouldWrite(event("_t\(n)._tcp"), at: start + .milliseconds(n)) { written += 1 }
            most = max(most, repeats.count)
        }
        #expect(written == 3 * AuditRepeats.remembered)
        #expect(most == AuditRepeats.remembered)
    }

    @Test(
        "a thousand processes of one program refused the same request leave one audit line; an operator's change starts afresh"
    )
    func brokerWritesOnce() throws {
        let directory = try makeTemporaryDirectory("herald-audit-repeats")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try PermissionBroker(
            stateDirectory: directory,
            policy: PermissionPolicy(operatorRule: OperatorRule(groupID: nil)),
            logger: Logger(label: "test"))
        // Process ids far above pid_max: no such process, so no manifest matches and every request is refused.
        func refuseAll(_ type: String) throws {
            let request = PermissionRequest.browse(try ServiceType(type))
            for n in 0..<1000 {
                let client = CallerIdentity(pid: Int32(50_000_000 + n), uid: 65534, groups: [65534])
                if case .allow = broker.decide(request, for: client, isNew: true) {
                    Issue.record("an unknown process was allowed")
                }
            }
            broker.flush()
        }
        func lines(_ type: String) throws -> Int {
            try broker.store.auditLog().filter { $0.event.serviceType == type }.count
        }
        try refuseAll("_repeat._tcp")
        try refuseAll("_other._tcp")
        #expect(try lines("_repeat._tcp") == 1)
        #expect(try lines("_other._tcp") == 1)
        try broker.register(
            Manifest(
                id: "org.example.audit", name: "Audit", executables: ["/nonexistent/audit"],
                bonjourServices: ["_audit._tcp"], usageDescription: "Tests."), by: "test")
        try refuseAll("_repeat._tcp")
        #expect(try lines("_repeat._tcp") == 2)
    }
}
