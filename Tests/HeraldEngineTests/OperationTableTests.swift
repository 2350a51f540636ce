import HeraldEngine
import HeraldWire
import Testing

/// A burst of client operations (a browser resolving every instance it finds) grows the engine's table of
/// operations; a dictionary never shrinks by itself, so the table must be given back once the burst is over.
@Suite("The engine's table of operations after a burst")
struct OperationTableTests {
    @Test("2,000 resolves started and cancelled leave no table behind, and the engine still resolves")
    func burstGivesItsTableBack() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Office Printer"), at: $1) }
        lan.run(for: 5000)

        let burst = 2000
        lan.with(beta) { engine, now in
            for number in 0..<burst {
                let instance = Fixture.instance("Printer \(number)")
                engine.resolve(OperationID(UInt64(100 + number)), instance: instance, at: now)
            }
        }
        var grown = 0
        lan.with(beta) { engine, _ in grown = engine.operationTableCapacity }
        #expect(grown >= burst)
        lan.run(for: 200)
        lan.with(beta) { engine, now in
            for number in 0..<burst { engine.cancel(OperationID(UInt64(100 + number)), at: now) }
        }
        var left = -1
        var operations = -1
        lan.with(beta) { engine, _ in
            left = engine.operationTableCapacity
            operations = engine.operationCount
        }
        #expect(operations == 0)
        #expect(left == 0, "a table with room for \(left) operations kept after all of them ended")

        // The engine keeps working with its new, empty table.
        lan.with(beta) { $0.resolve(OperationID(8), instance: Fixture.instance("Office Printer"), at: $1) }
        lan.run(for: 1000)
        let resolved = lan.events(of: beta, OperationID(8)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        let service = try #require(resolved.last)
        #expect(service.port == 631)
    }
}
