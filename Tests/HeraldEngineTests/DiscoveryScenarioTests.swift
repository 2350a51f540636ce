import HeraldEngine
import HeraldWire
import Testing

@Suite("Discovery on a simulated LAN")
struct DiscoveryScenarioTests {
    let printer = ServiceRegistration(
        instance: "Office Printer", type: "_ipp._tcp.local.", subtypes: ["_universal"],
        port: 631, txt: try! TXTRecord(["rp": Array("ipp/print".utf8), "color": nil]))

    @Test("a service registered on one host is browsed and resolved by another, with host, port, TXT and address")
    func browseAndResolve() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.with(alpha) { $0.register(OperationID(1), printer, at: $1) }
        lan.run(for: 5000)
        // beta joins after the announcements: its cache is empty, so it must ask.
        let beta = lan.addHost("beta")
        lan.run(for: 3000)
        let registered = lan.events(of: alpha, OperationID(1)).compactMap { entry -> DNSName? in
            if case .registered(let name) = entry.event { return name } else { return nil }
        }
        #expect(registered == ["Office Printer._ipp._tcp.local."])

        lan.with(beta) { $0.browse(OperationID(7), type: "_ipp._tcp.local.", at: $1) }
        let browseStart = lan.now
        lan.run(for: 1000)
        let found = lan.events(of: beta, OperationID(7))
        let added = try #require(found.first)
        #expect(added.event == .instanceAdded("Office Printer._ipp._tcp.local.", SimulatedLAN.ipv4Link))
        // First query after 20–120 ms, the shared PTR answer 20–120 ms later, plus 1 ms of wire each way.
        #expect((22...242).contains(added.time - browseStart))

        lan.with(beta) { $0.resolve(OperationID(8), instance: "Office Printer._ipp._tcp.local.", at: $1) }
        lan.run(for: 1000)
        let resolved = lan.events(of: beta, OperationID(8)).compactMap { entry -> ResolvedService? in
            if case .resolved(let service) = entry.event { return service } else { return nil }
        }
        let service = try #require(resolved.last)
        #expect(service.target == "alpha.local.")
        #expect(service.port == 631)
        #expect(service.txt["rp"] == .some(Array("ipp/print".utf8)))
        #expect(service.txt.contains(key: "color"))
        #expect(service.addresses == [.v4(IPv4Address(10, 0, 0, 1))])
    }

    @Test("browsing a subtype finds only the services registered with it")
    func subtypeBrowse() {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) {
            $0.register(OperationID(1), printer, at: $1)
            $0.register(
                OperationID(2), ServiceRegistration(instance: "Plain", type: "_ipp._tcp.local.", port: 632), at: $1)
        }
        lan.run(for: 2000)
        lan.with(beta) { $0.browse(OperationID(3), type: "_universal._sub._ipp._tcp.local.", at: $1) }
        lan.run(for: 3000)
        let names = lan.events(of: beta, OperationID(3)).map(\.event)
        #expect(names == [.instanceAdded("Office Printer._ipp._tcp.local.", SimulatedLAN.ipv4Link)])
    }

    @Test("a withdrawn service says goodbye and disappears from a browser about one second later")
    func goodbye() throws {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        let beta = lan.addHost("beta")
        lan.with(alpha) { $0.register(OperationID(1), printer, at: $1) }
        lan.with(beta) { $0.browse(OperationID(2), type: "_ipp._tcp.local.", at: $1) }
        lan.run(for: 3000)
        lan.with(alpha) { $0.cancel(OperationID(1), at: $1) }
        let withdrawnAt = lan.now
        lan.run(for: 3000)
        let goodbyes = lan.packets(from: alpha).filter { packet in
            packet.time >= withdrawnAt
                && packet.message.answers.contains { $0.name == "Office Printer._ipp._tcp.local." }
        }
        #expect(!goodbyes.isEmpty)
        #expect(goodbyes.allSatisfy { $0.message.answers.allSatisfy { $0.ttl == 0 } })
        let removed = try #require(lan.events(of: beta, OperationID(2)).last)
        #expect(removed.event == .instanceRemoved("Office Printer._ipp._tcp.local.", SimulatedLAN.ipv4Link))
        #expect((1000...1100).contains(removed.time - withdrawnAt))
    }

    @Test("a browse on the registering host itself sees the local service")
    func localBrowse() {
        var lan = SimulatedLAN()
        let alpha = lan.addHost("alpha")
        lan.with(alpha) {
            $0.browse(OperationID(2), type: "_ipp._tcp.local.", at: $1)
            $0.register(OperationID(1), printer, at: $1)
        }
        lan.run(for: 2000)
        #expect(
            lan.events(of: alpha, OperationID(2)).map(\.event)
                == [.instanceAdded("Office Printer._ipp._tcp.local.", SimulatedLAN.ipv4Link)])
    }
}
