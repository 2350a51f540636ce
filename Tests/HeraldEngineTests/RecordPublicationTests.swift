import HeraldEngine
import HeraldWire
import Testing

@Suite("Records clients publish: added to a service, or registered on their own (RFC 6762 §8, §10.1)")
struct RecordPublicationTests {
    let link = SimulatedLAN.ipv4Link
    let laser: DNSName = "laser.local."

    func address(_ last: UInt8) -> ResourceRecord {
        ResourceRecord(name: laser, ttl: 120, data: .a(IPv4Address(10, 0, 0, last)))
    }

    /// The records host `observer`'s query operation `id` saw come and go, as (added, data).
    func seen(_ lan: SimulatedLAN, _ observer: Int, _ id: OperationID) -> [(added: Bool, data: RecordData)] {
        lan.events(of: observer, id).compactMap { entry in
            switch entry.event {
            case .recordAdded(let record, _): return (true, record.data)
            case .recordRemoved(let record, _): return (false, record.data)
            default: return nil
            }
        }
    }

    @Test("a unique record registered on its own is probed, announced, reported and answered; cancelling it says goodbye")
    func uniqueRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        lan.with(alpha) { $0.registerRecord(OperationID(1), RecordRegistration(record: address(77), unique: true), at: $1) }
        lan.run(for: 3000)
        #expect(lan.probes(from: alpha, for: laser).count == 3)
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [laser])
        lan.with(beta) { $0.query(OperationID(2), name: laser, type: .a, at: $1) }
        lan.run(for: 2000)
        #expect(seen(lan, beta, OperationID(2)).map(\.added) == [true])
        #expect(seen(lan, beta, OperationID(2)).first?.data == .a(IPv4Address(10, 0, 0, 77)))
        let cancelledAt = lan.now
        lan.with(alpha) { $0.cancel(OperationID(1), at: $1) }
        lan.run(for: 3000)
        let goodbyes = lan.multicastResponses(from: alpha).filter { $0.time >= cancelledAt }.flatMap(\.message.answers)
        #expect(goodbyes.map(\.name) == [laser])
        #expect(goodbyes.allSatisfy { $0.ttl == 0 })
        #expect(seen(lan, beta, OperationID(2)).map(\.added) == [true, false])
    }

    @Test("a unique record whose name another host holds fails with a name conflict and is never announced")
    func uniqueRecordConflict() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(beta) { $0.registerRecord(OperationID(1), RecordRegistration(record: address(77), unique: true), at: $1) }
        lan.run(for: 5000)
        lan.with(alpha) { $0.registerRecord(OperationID(2), RecordRegistration(record: address(88), unique: true), at: $1) }
        lan.run(for: 5000)
        #expect(lan.events(of: alpha, OperationID(2)).map(\.event) == [.registrationFailed(.nameConflict)])
        #expect(!lan.multicastResponses(from: alpha, containing: laser).contains { response in
            response.message.answers.contains { $0.data == .a(IPv4Address(10, 0, 0, 88)) }
        })
        // The holder keeps it.
        #expect(lan.registrations(of: beta, OperationID(1)).map(\.name) == [laser])
        #expect(lan.events(of: beta, OperationID(1)).count == 1)
    }

    @Test("shared records are announced at once without probing, and two hosts' shared records of one name coexist")
    func sharedRecords() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let name: DNSName = "_printers.example.local."
        let mine = ResourceRecord(name: name, ttl: 4500, data: .ptr("one.example.local."))
        let theirs = ResourceRecord(name: name, ttl: 4500, data: .ptr("two.example.local."))
        lan.with(beta) { $0.query(OperationID(3), name: name, type: .ptr, at: $1) }
        let registeredAt = lan.now
        lan.with(alpha) { $0.registerRecord(OperationID(1), RecordRegistration(record: mine, unique: false), at: $1) }
        lan.with(beta) { $0.registerRecord(OperationID(2), RecordRegistration(record: theirs, unique: false), at: $1) }
        lan.run(for: 5000)
        #expect(lan.probes(from: alpha, for: name).isEmpty && lan.probes(from: beta, for: name).isEmpty)
        let announced = try #require(lan.multicastResponses(from: alpha, containing: name).first)
        #expect(announced.time - registeredAt <= 10)
        #expect(announced.message.answers.contains { $0.data == mine.data && !$0.cacheFlush })
        #expect(lan.registrations(of: alpha, OperationID(1)).map(\.name) == [name])
        #expect(lan.registrations(of: beta, OperationID(2)).map(\.name) == [name])
        #expect(Set(seen(lan, beta, OperationID(3)).filter(\.added).map { "\($0.data)" }) == ["one.example.local.", "two.example.local."])
        #expect(!seen(lan, beta, OperationID(3)).contains { !$0.added })
    }

    @Test("a record added to a service is announced with it, its update is announced again, its removal says goodbye")
    func addedRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        let printer = Fixture.instance("Printer")
        let first = RecordData.hinfo(cpu: Array("ARM".utf8), os: Array("PrinterOS 1".utf8))
        let second = RecordData.hinfo(cpu: Array("ARM".utf8), os: Array("PrinterOS 2".utf8))
        var results: [Bool] = []  // what the engine answered to each call, all expected true
        lan.with(alpha) {
            $0.register(OperationID(1), Fixture.service("Printer"), at: $1)
            // Added before the service is announced: it goes out with it.
            results.append($0.addRecord(AddedRecord(id: 7, type: .hinfo, data: first, ttl: 4500), to: OperationID(1), at: $1))
        }
        lan.with(beta) { $0.query(OperationID(2), name: printer, type: .hinfo, at: $1) }
        lan.run(for: 5000)
        #expect(lan.registrations(of: alpha, OperationID(1)).count == 1)
        #expect(seen(lan, beta, OperationID(2)).map(\.data) == [first])
        // An update: announced again at once with the cache-flush bit, which replaces the old data in peers' caches.
        let updatedAt = lan.now
        lan.with(alpha) { results.append($0.addRecord(AddedRecord(id: 7, type: .hinfo, data: second, ttl: 4500), to: OperationID(1), at: $1)) }
        lan.run(for: 3000)
        let update = try #require(lan.multicastResponses(from: alpha, containing: printer, type: .hinfo).first { $0.time >= updatedAt })
        #expect(update.message.answers.contains { $0.data == second && $0.cacheFlush && $0.ttl == 4500 })
        #expect(lan.probes(from: alpha).allSatisfy { $0.time < updatedAt })
        #expect(seen(lan, beta, OperationID(2)).map(\.added) == [true, true, false])
        #expect(seen(lan, beta, OperationID(2)).last?.data == first)
        // Removal: a goodbye for it alone; the service stays.
        let removedAt = lan.now
        lan.with(alpha) {
            results.append($0.removeAddedRecord(7, from: OperationID(1), at: $1))
            results.append(!$0.removeAddedRecord(7, from: OperationID(1), at: $1))
        }
        lan.run(for: 3000)
        let goodbyes = lan.multicastResponses(from: alpha).filter { $0.time >= removedAt }.flatMap(\.message.answers)
            .filter { $0.ttl == 0 }
        #expect(goodbyes.map(\.data) == [second])
        #expect(seen(lan, beta, OperationID(2)).map(\.added) == [true, true, false, false])
        #expect(lan.hosts[alpha].engine.registeredName(of: OperationID(1)) == printer)
        #expect(results == [true, true, true, true])
    }

    @Test("records cannot be added to what is not a service registration")
    func addToNothing() {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        var results: [Bool] = []  // what the engine answered to each call, all expected true
        lan.with(alpha) {
            results.append(!$0.addRecord(AddedRecord(id: 1, type: .hinfo, data: .hinfo(cpu: [], os: []), ttl: 120), to: OperationID(9), at: $1))
            $0.registerRecord(OperationID(1), RecordRegistration(record: address(5), unique: true), at: $1)
            results.append(!$0.addRecord(AddedRecord(id: 1, type: .hinfo, data: .hinfo(cpu: [], os: []), ttl: 120), to: OperationID(1), at: $1))
            results.append(!$0.updateRegisteredRecord(OperationID(1), data: .ptr("x.local."), ttl: 120, at: $1))
            results.append($0.updateRegisteredRecord(OperationID(1), data: .a(IPv4Address(10, 0, 0, 6)), ttl: 120, at: $1))
        }
        #expect(results == [true, true, true, true])
    }
}
