import HeraldEngine
import HeraldWire
import Testing

/// The responder remembers when it last multicast each of its records (RFC 6762 §6's one-second rule, §5.4's
/// "multicast recently" test for QU questions). A daemon whose apps keep registering ever-new instance names must
/// not keep a note for every record it ever sent.
@Suite("What the responder remembers of its multicasts")
struct ResponderMemoryTests {
    let peer = SimulatedLAN.peer(1)

    @Test("1,000 registrations that come and go leave a bounded number of notes, and a live record's note survives")
    func churnLeavesBoundedNotes() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Keeper"), at: $1) }
        lan.run(for: 5000)
        var baseline = 0
        lan.with(alpha) { engine, _ in baseline = engine.rememberedMulticastCount }
        #expect(baseline > 0, "the announcements of Keeper and the host's addresses were noted")

        // A new instance every 100 ms, each withdrawn (with goodbyes) two seconds after it was registered.
        let churned = 1000
        for number in 0..<churned {
            lan.with(alpha) {
                $0.register(OperationID(UInt64(10 + number)), Fixture.service("Churn \(number)"), at: $1)
            }
            if number >= 20 { lan.with(alpha) { $0.cancel(OperationID(UInt64(10 + number - 20)), at: $1) } }
            lan.run(for: 100)
        }
        for number in (churned - 20)..<churned {
            lan.with(alpha) { $0.cancel(OperationID(UInt64(10 + number)), at: $1) }
        }
        lan.run(for: 3000)

        let announced = Set(lan.multicastResponses(from: alpha).flatMap(\.message.answers).map(\.name))
        // All but the last few, withdrawn at once at the end, were announced.
        #expect(announced.count > churned - 20, "\(announced.count) names announced")
        var remembered = 0
        lan.with(alpha) { engine, _ in remembered = engine.rememberedMulticastCount }
        // Each instance multicasts 4 records of its own; keeping them all would be over 4,000 notes. What can still
        // matter is about 10 s of churn (the shortest a note is kept), and a sweep waits for the notes to double.
        #expect(remembered < 1000, "\(remembered) notes after \(churned) instances came and went")

        // Keeper's records were multicast in its announcements, within a quarter of their TTL: a QU question is
        // still answered by unicast, so its note outlived the sweeps.
        let askedAt = lan.now
        let keeper = Fixture.instance("Keeper")
        lan.inject(.query([Fixture.question(keeper, .txt, qu: true)]), from: peer)
        lan.run(for: 1000)
        let answer = try #require(
            lan.packets(from: alpha).first {
                $0.time >= askedAt && $0.message.isResponse
                    && $0.message.answers.contains { $0.name == keeper }
            })
        #expect(answer.destination == .unicast(peer))
    }
}
