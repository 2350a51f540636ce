import HeraldEngine
import HeraldSession
import HeraldWire
import Testing

@Suite("Engine operation IDs and the routing of their events")
struct EngineOperationIDTests {
    final class Receiver: EngineEventReceiver {
        var events: [OperationID] = []
        var batchEnds = 0
        func receive(_ event: OperationEvent, for operation: OperationID) { events.append(operation) }
        func engineBatchEnded() { batchEnds += 1 }
    }

    @Test("each owner's IDs name that owner, and no two owners ever hand out the same ID")
    func tagged() {
        var apps = EngineOperationIDs(owner: .appSessions)
        var nss = EngineOperationIDs(owner: .nss)
        var services = EngineOperationIDs(owner: .staticServices)
        var seen: Set<OperationID> = []
        for _ in 0..<100 {
            for (allocator, owner) in [
                (apps.next(), EngineOperationOwner.appSessions), (nss.next(), .nss),
                (services.next(), .staticServices),
            ] {
                #expect(EngineOperationOwner(of: allocator) == owner)
                #expect(seen.insert(allocator).inserted)
            }
        }
        #expect(EngineOperationOwner(of: OperationID(0)) == .engine, "the engine's own host publication")
        #expect(EngineOperationOwner(of: OperationID(0xFF << 56)) == nil)
    }

    @Test("events go to their owner whatever the order receivers registered in; unowned ones are dropped")
    func routing() {
        let router = EngineEventRouter()
        let apps = Receiver()
        let nss = Receiver()
        router.register(nss, for: .nss)
        router.register(apps, for: .appSessions)
        var appIDs = EngineOperationIDs(owner: .appSessions)
        var nssIDs = EngineOperationIDs(owner: .nss)
        var serviceIDs = EngineOperationIDs(owner: .staticServices)
        let event = OperationEvent.registrationFailed(.nameConflict)
        let (a, n, s) = (appIDs.next(), nssIDs.next(), serviceIDs.next())
        #expect(router.route(event, for: a))
        #expect(router.route(event, for: n))
        #expect(!router.route(event, for: s), "nobody receives static services' events")
        #expect(!router.route(event, for: OperationID(0)))
        #expect(apps.events == [a] && nss.events == [n])
        router.batchEnded()
        #expect(apps.batchEnds == 1 && nss.batchEnds == 1)
    }
}
