import HeraldEngine
import HeraldWire
import Testing

/// Records a client adds to a service (`DNSServiceAddRecord` …) or registers by itself (`DNSServiceRegisterRecord`).
@Suite("Added and individually registered records")
struct RecordRegistrationTests {
    let printer = Fixture.instance("Printer")
    let hinfo = RecordData.hinfo(cpu: Array("ARM".utf8), os: Array("LINUX".utf8))

    @Test("a record added to a service is announced at its instance name, answered, and withdrawn with a goodbye")
    func addedRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        let addedAt = lan.now
        let extra = ServiceExtraRecord(type: .hinfo, data: hinfo)
        lan.with(alpha) { $0.updateExtraRecords(OperationID(1), [extra], at: $1) }
        lan.run(for: 3000)
        let announced = lan.multicastResponses(from: alpha, containing: printer, type: .hinfo).filter {
            $0.time >= addedAt
        }
        #expect(announced.count >= 2, "announced at least twice (RFC 6762 §8.3)")
        #expect(
            announced.allSatisfy {
                $0.message.answers.contains { $0.type == .hinfo && $0.cacheFlush && $0.ttl == 4500 }
            })

        let askedAt = lan.now
        lan.inject(.query([Fixture.question(printer, .hinfo)]), from: SimulatedLAN.peer(1))
        lan.run(for: 1000)
        #expect(
            lan.packets(from: alpha).contains { $0.time > askedAt && $0.message.answers.contains { $0.data == hinfo } })

        let removedAt = lan.now
        lan.with(alpha) { $0.updateExtraRecords(OperationID(1), [], at: $1) }
        lan.run(for: 2000)
        let goodbyes = lan.packets(from: alpha).filter { $0.time >= removedAt }.flatMap(\.message.answers)
        #expect(goodbyes.contains { $0.type == .hinfo && $0.ttl == 0 }, "\(goodbyes)")
        #expect(!goodbyes.contains { $0.type == .srv && $0.ttl == 0 }, "the service itself stays")
    }

    @Test("a unique record registered by itself is probed, announced and reported registered")
    func uniqueRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        let name: DNSName = "box.local."
        let startedAt = lan.now
        lan.with(alpha) {
            $0.registerRecord(
                OperationID(7), RecordRegistration(name: name, type: .hinfo, data: hinfo, ttl: 120, unique: true),
                at: $1)
        }
        lan.run(for: 3000)
        #expect(lan.probes(from: alpha, for: name).count == 3)
        let events = lan.events(of: alpha, OperationID(7))
        #expect(events.map(\.event) == [.registered(name)], "\(events)")
        let registeredAt = try #require(events.first?.time)
        #expect(registeredAt - startedAt >= 750)
        #expect(lan.multicastResponses(from: alpha, containing: name, type: .hinfo).count >= 2)
    }

    @Test("a shared record registered by itself is announced without probing")
    func sharedRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.run(for: 2000)
        let name: DNSName = "_printers.local."
        let startedAt = lan.now
        lan.with(alpha) {
            $0.registerRecord(
                OperationID(8),
                RecordRegistration(
                    name: name, type: .ptr, data: .ptr(printer), ttl: 4500,
                    unique: false), at: $1)
        }
        lan.run(for: 2000)
        #expect(lan.probes(from: alpha, for: name).isEmpty)
        let announced = lan.multicastResponses(from: alpha, containing: name, type: .ptr)
        #expect(announced.count >= 2)
        let firstAt = try #require(announced.first?.time)
        #expect(firstAt - startedAt <= 250)
        #expect(announced.allSatisfy { $0.message.answers.filter { $0.name == name }.allSatisfy { !$0.cacheFlush } })
    }

    @Test("a unique record whose name is taken fails with a name conflict and is never renamed")
    func conflictingRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let name: DNSName = "taken.local."
        lan.reactors.append(Fixture.claimant(from: SimulatedLAN.peer(1)) { $0 == name })
        lan.run(for: 2000)
        lan.with(alpha) {
            $0.registerRecord(
                OperationID(9), RecordRegistration(name: name, type: .hinfo, data: hinfo, ttl: 120, unique: true),
                at: $1)
        }
        lan.run(for: 5000)
        #expect(lan.events(of: alpha, OperationID(9)).map(\.event) == [.registrationFailed(.nameConflict)])
        #expect(lan.multicastResponses(from: alpha, containing: name).isEmpty)
        #expect(lan.hosts[alpha].engine.registeredName(of: OperationID(9)) == nil)
    }
}

extension RecordRegistrationTests {
    @Test("an added record changed right after it was announced replaces the old data in a peer's cache")
    func quickUpdateOfAddedRecord() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        let printer = Fixture.instance("Printer")
        lan.with(alpha) { $0.register(OperationID(1), Fixture.service("Printer"), at: $1) }
        lan.run(for: 5000)
        let first = RecordData.hinfo(cpu: Array("V1".utf8), os: Array("X".utf8))
        let second = RecordData.hinfo(cpu: Array("V2".utf8), os: Array("X".utf8))
        lan.with(alpha) {
            $0.updateExtraRecords(OperationID(1), [ServiceExtraRecord(type: .hinfo, data: first)], at: $1)
        }
        lan.run(for: 200)
        let updatedAt = lan.now
        lan.with(alpha) {
            $0.updateExtraRecords(OperationID(1), [ServiceExtraRecord(type: .hinfo, data: second)], at: $1)
        }
        lan.run(for: 4000)
        let announced = lan.multicastResponses(from: alpha, containing: printer, type: .hinfo).filter {
            $0.time >= updatedAt
        }
        #expect(announced.count >= 2, "the new data is announced at least twice")
        var cached: [CachedRecord] = []
        lan.with(beta) { engine, _ in cached = engine.cachedRecords(on: SimulatedLAN.ipv4Link) }
        let hinfos = cached.filter { $0.record.name == printer && $0.record.type == .hinfo }.map(\.record.data)
        #expect(hinfos == [second], "\(hinfos)")
    }
}
