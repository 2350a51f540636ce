import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire
import Testing

@testable import HeraldSession

@Suite("Client sessions: parking, re-judging, browse groups, batching, presence, limits")
struct SessionCoreTests {
    static let ipp: DNSName = "_ipp._tcp.local."
    static let app: UInt32 = 501
    static let other: UInt32 = 502

    static func ptr(_ label: String, ttl: UInt32 = 4500) -> ResourceRecord {
        ResourceRecord(name: ipp, ttl: ttl, data: .ptr(ipp.instance(label)))
    }

    static func engineBrowses(_ commands: [EngineCommand]) -> [OperationID] {
        commands.compactMap { if case .browse(let id, _, _) = $0 { return id } else { return nil } }
    }

    static func cancels(_ commands: [EngineCommand]) -> [OperationID] {
        commands.compactMap { if case .cancel(let id) = $0 { return id } else { return nil } }
    }

    @Test("a browse parked while its app waits for a decision reaches the engine only once it is granted")
    func parkedUntilGranted() {
        let lan = SessionHarness()
        lan.gate.decisions[Self.app] = ScriptedGate.parked
        lan.connect(1, user: Self.app)
        #expect(lan.browse(1, 7, "_ipp._tcp") == .noError, "accepted: a parked request is not refused")
        #expect(lan.browseResults(1) == ["error \(DNSServiceError.noAuth)"], "its first reply says NoAuth")
        #expect(lan.takeCommands().isEmpty, "nothing reaches the engine while parked")
        let parked = lan.core.operations(of: ConnectionID(1))
        #expect(parked.count == 1 && parked[0].parked && parked[0].gated == .browse(try! ServiceType("_ipp._tcp")))
        #expect(parked[0] == parked[0] && parked[0].description.contains("parked"), "a parked operation is a value")
        lan.receive([Self.ptr("Printer")])
        #expect(lan.browseResults(1).isEmpty, "a parked browse sees nothing")

        lan.gate.decisions[Self.app] = .allow
        lan.core.accessChanged()
        lan.pump()
        #expect(Self.engineBrowses(lan.takeCommands()).count == 1, "granted: the browse starts")
        #expect(lan.gate.asked.last?.isNew == false, "judged again as the same caller, not as a new request")
        #expect(lan.browseResults(1) == ["+Printer@2"], "and is told what the cache already holds")
        #expect(lan.core.operations(of: ConnectionID(1)).first?.parked == false)
    }

    @Test("a deny stops running operations with NoAuth: a browse forgets its results, a registration says goodbye")
    func denyStopsOperations() throws {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        #expect(lan.browse(1, 1, "_ipp._tcp") == .noError)
        #expect(
            lan.request(1, 2, .registerService(RegisterServiceRequest(name: "Mine", regtype: "_http._tcp", port: 80)))
                == .noError)
        let started = lan.takeCommands()
        let registration = try #require(
            started.compactMap { if case .register(let id, _) = $0 { return id } else { return nil } }.first)
        lan.run(for: 3_000)
        lan.receive([Self.ptr("Printer")])
        let before = lan.take(1).map(\.reply)
        #expect(
            before.contains {
                if case .registerService(let r) = $0 {
                    return r.name == "Mine" && r.error == .noError
                } else {
                    return false
                }
            })
        #expect(before.contains { if case .browse(let r) = $0 { return r.name == "Printer" } else { return false } })

        lan.gate.decisions[Self.app] = ScriptedGate.refused
        lan.core.accessChanged()
        lan.pump()
        let cancelled = Self.cancels(lan.takeCommands())
        #expect(cancelled.contains(registration), "the registration is withdrawn (its goodbyes go out)")
        #expect(cancelled.count == 2, "and the browse group's engine browse ends with its only member")
        let after = lan.take(1).map(\.reply)
        #expect(after.count == 2)
        #expect(
            after.allSatisfy {
                switch $0 {
                case .browse(let r): return r.error == .noAuth
                case .registerService(let r): return r.error == .noAuth
                default: return false
                }
            })
        let parkedAgain = lan.core.operations(of: ConnectionID(1)).allSatisfy { $0.parked }
        #expect(parkedAgain, "kept, parked, for a later grant")

        lan.gate.decisions[Self.app] = .allow
        lan.core.accessChanged()
        lan.pump()
        #expect(lan.browseResults(1) == ["+Printer@2"], "granted again: the browse starts afresh, its results anew")
    }

    @Test(
        "a re-judging pass asks the gate once per caller, with all of that caller's operations, and identifies no connection"
    )
    func rejudgingAsksOncePerCaller() {
        let lan = SessionHarness()
        lan.gate.decisions[Self.app] = ScriptedGate.parked
        lan.gate.decisions[Self.other] = ScriptedGate.parked
        // Two connections of one user (two processes: two callers) and one of another user.
        let operations = [1: 5, 2: 3, 3: 2]
        lan.connect(1, user: Self.app)
        lan.connect(2, user: Self.app)
        lan.connect(3, user: Self.other)
        for (connection, count) in operations {
            for n in 0..<count {
                #expect(lan.browse(connection, UInt64(n + 1), "_t\(connection)x\(n)._tcp") == .noError)
            }
        }
        #expect(lan.core.operations(of: ConnectionID(1)).allSatisfy { $0.parked })
        let identified = lan.gate.callerQuestions
        let asked = lan.gate.asked.count

        lan.gate.decisions[Self.app] = .allow
        lan.core.accessChanged()
        lan.pump()
        #expect(
            lan.gate.judgedAgain.map(\.caller.pid) == [1001, 1002, 1003], "one question per caller, in connection order"
        )
        #expect(lan.gate.judgedAgain.map(\.requests) == [5, 3, 2], "each with every operation of its caller")
        #expect(lan.gate.callerQuestions == identified, "no connection is identified again")
        #expect(lan.gate.asked.count == asked + 10 && lan.gate.asked.dropFirst(asked).allSatisfy { !$0.isNew })
        #expect(Self.engineBrowses(lan.takeCommands()).count == 8, "the granted user's eight browses start")
        #expect(lan.core.operations(of: ConnectionID(1)).allSatisfy { !$0.parked })
        #expect(lan.core.operations(of: ConnectionID(2)).allSatisfy { !$0.parked })
        #expect(lan.core.operations(of: ConnectionID(3)).allSatisfy { $0.parked }, "the other user's stay parked")

        lan.gate.decisions[Self.app] = ScriptedGate.refused
        lan.core.accessChanged()
        lan.pump()
        #expect(lan.gate.judgedAgain.count == 6, "a second pass asks once per caller again")
        #expect(Self.cancels(lan.takeCommands()).count == 8, "denied: the eight browses stop")
        #expect(lan.gate.callerQuestions == identified)
    }

    @Test("browses of one type from several connections share one engine browse; each gets every result")
    func browseGroupFanOut() {
        let lan = SessionHarness()
        for id in 1...3 { lan.connect(id, user: Self.app + UInt32(id)) }
        #expect(lan.browse(1, 10, "_ipp._tcp") == .noError)
        #expect(lan.browse(2, 20, "_ipp._tcp") == .noError)
        #expect(lan.browse(3, 30, "_ipp._tcp", interface: 2) == .noError)
        let browses = Self.engineBrowses(lan.takeCommands())
        #expect(browses.count == 2, "one for all interfaces, one for interface 2")
        #expect(lan.core.browseGroupSizes.map(\.members) == [2, 1])

        lan.receive([Self.ptr("Printer")])
        #expect(lan.take(1).map(\.context.rawValue) == [10])
        #expect(lan.take(2).map(\.context.rawValue) == [20], "one reply body, each connection its own context")
        #expect(lan.browseResults(3) == ["+Printer@2"])

        // A browse joining the running group is told at once what the group knows, without a new engine browse.
        lan.connect(4, user: Self.other)
        #expect(lan.browse(4, 40, "_ipp._tcp") == .noError)
        #expect(lan.browseResults(4) == ["+Printer@2"])
        #expect(Self.engineBrowses(lan.takeCommands()).isEmpty)

        // Leaving: the engine browse ends only with its last member.
        lan.cancel(1, 10)
        lan.cancel(2, 20)
        #expect(Self.cancels(lan.takeCommands()).isEmpty)
        lan.cancel(4, 40)
        #expect(Self.cancels(lan.takeCommands()) == [browses[0]])
        lan.receive([Self.ptr("Scanner")])
        #expect(lan.browseResults(1).isEmpty)
        #expect(lan.browseResults(4).isEmpty)
        #expect(lan.browseResults(3) == ["+Scanner@2"], "the other group runs on")
    }

    @Test("replies of one batch carry MoreComing but each connection's last")
    func moreComing() {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        lan.connect(2, user: Self.other)
        _ = lan.browse(1, 1, "_ipp._tcp")
        _ = lan.browse(2, 2, "_ipp._tcp")
        lan.receive([Self.ptr("A"), Self.ptr("B"), Self.ptr("C")])
        let first = lan.take(1)
        let second = lan.take(2)
        #expect(first.map(\.moreComing) == [true, true, false])
        #expect(second.map(\.moreComing) == [true, true, false])
        lan.receive([Self.ptr("D")])
        #expect(lan.take(1).map(\.moreComing) == [false], "a batch of one has no MoreComing")
    }

    @Test("an instance on both links of an interface is one result, removed when the last link loses it")
    func presencePerInterface() {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        _ = lan.browse(1, 1, "_ipp._tcp")
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv4)
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv6)
        #expect(lan.browseResults(1) == ["+Printer@2"], "IPv4 and IPv6 of one interface count once")
        lan.receive([Self.ptr("Printer", ttl: 0)], on: SessionHarness.ipv4)
        lan.run(for: 2_000)
        #expect(lan.browseResults(1).isEmpty, "still there on IPv6")
        lan.receive([Self.ptr("Printer", ttl: 0)], on: SessionHarness.ipv6)
        lan.run(for: 2_000)
        #expect(lan.browseResults(1) == ["-Printer@2"])
    }

    @Test(
        "an instance reported added again on the same link (a full cache evicted its record and heard it again) is shown once, and gone after that link's one removal"
    )
    func repeatedAddOnOneLink() throws {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        _ = lan.browse(1, 1, "_ipp._tcp")
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv4)
        let engineBrowse = try #require(Self.engineBrowses(lan.commands).first)
        lan.core.receive(.instanceAdded(Self.ipp.instance("Printer"), SessionHarness.ipv4), for: engineBrowse)
        lan.pump()
        #expect(lan.browseResults(1) == ["+Printer@2"])
        lan.receive([Self.ptr("Printer", ttl: 0)], on: SessionHarness.ipv4)
        lan.run(for: 2_000)
        #expect(lan.browseResults(1) == ["-Printer@2"], "one goodbye on the link that reported it twice")
        // A removal on a link that never reported the instance changes nothing.
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv4)
        lan.core.receive(.instanceRemoved(Self.ipp.instance("Printer"), SessionHarness.ipv6), for: engineBrowse)
        lan.pump()
        #expect(lan.browseResults(1) == ["+Printer@2"])
    }

    @Test("a resolve reports an interface's answer once, whichever link repeats it, and again when it changes")
    func resolveReportsChangesOnly() {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        lan.request(1, 3, .resolve(ResolveRequest(name: "Printer", regtype: "_ipp._tcp", domain: "local.")))
        let instance = Self.ipp.instance("Printer")
        func srv(port: UInt16) -> ResourceRecord {
            ResourceRecord(
                name: instance, ttl: 120, data: .srv(SRVData(port: port, target: "box.local.")), cacheFlush: true)
        }
        let txt = ResourceRecord(name: instance, ttl: 4500, data: .txt(try! TXTRecord(["rp": nil])), cacheFlush: true)
        func resolved() -> [String] {
            lan.take(1).compactMap { entry in
                guard case .resolve(let reply) = entry.reply, reply.error == .noError else { return nil }
                return "\(reply.hostTarget):\(reply.port)@\(reply.interfaceIndex)"
            }
        }
        lan.receive([srv(port: 631), txt], on: SessionHarness.ipv4)
        #expect(resolved() == ["box.local.:631@2"])
        lan.receive([srv(port: 631), txt], on: SessionHarness.ipv6)
        lan.receive([srv(port: 631), txt], on: SessionHarness.ipv4)
        #expect(resolved().isEmpty, "the same answer, from either family of the interface, is not reported again")
        lan.run(for: 2_000)
        lan.receive([srv(port: 8631)], on: SessionHarness.ipv4)
        lan.run(for: 2_000)
        #expect(resolved() == ["box.local.:8631@2"], "a new port is")
    }

    @Test(
        "a core that reports families (Avahi's): an instance on both links of an interface is a result per family, each removed with its link"
    )
    func presencePerFamily() {
        let lan = SessionHarness(reportsFamilies: true)
        lan.connect(1, user: Self.app)
        lan.connect(2, user: Self.app)
        _ = lan.browse(1, 1, "_ipp._tcp")
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv4)
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv6)
        lan.receive([Self.ptr("Printer")], on: SessionHarness.ipv6)
        #expect(lan.browseResultsWithFamilies(1) == ["+Printer@2 ipv4", "+Printer@2 ipv6"])
        // A browse joining the group is told both at once.
        _ = lan.browse(2, 2, "_ipp._tcp")
        #expect(lan.browseResultsWithFamilies(2) == ["+Printer@2 ipv4", "+Printer@2 ipv6"])
        lan.receive([Self.ptr("Printer", ttl: 0)], on: SessionHarness.ipv4)
        lan.run(for: 2_000)
        #expect(lan.browseResultsWithFamilies(1) == ["-Printer@2 ipv4"], "gone over IPv4, still there over IPv6")
        lan.receive([Self.ptr("Printer", ttl: 0)], on: SessionHarness.ipv6)
        lan.run(for: 2_000)
        #expect(lan.browseResultsWithFamilies(1) == ["-Printer@2 ipv6"])
        // A core that does not (the app socket's) names no family.
        let dnssd = SessionHarness()
        dnssd.connect(1, user: Self.app)
        _ = dnssd.browse(1, 1, "_ipp._tcp")
        dnssd.receive([Self.ptr("Printer")], on: SessionHarness.ipv6)
        #expect(dnssd.browseResultsWithFamilies(1) == ["+Printer@2 none"])
    }

    @Test("NoSuchRecord is shown per interface while a link says so and no record is shown, ended before a record")
    func negativeAnswers() throws {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        #expect(
            lan.request(1, 5, .query(QueryRecordRequest(flags: .returnIntermediates, name: "box.local.", rrtype: 28)))
                == .noError)
        let id = try #require(
            lan.takeCommands().compactMap { command -> OperationID? in
                if case .query(let id, _, _, _, true) = command { return id } else { return nil }
            }.first)
        let key = RecordKey(name: "box.local.", type: .aaaa)
        func results() -> [String] {
            lan.take(1).compactMap { entry in
                guard case .query(let r) = entry.reply else { return nil }
                return
                    "\(r.flags.contains(.add) ? "+" : "-")\(r.error == .noSuchRecord ? "none" : "record")@\(r.interfaceIndex)"
            }
        }
        lan.core.receive(.negativeAnswerAdded(key, SessionHarness.ipv4, ttl: 120), for: id)
        lan.core.receive(.negativeAnswerAdded(key, SessionHarness.ipv6, ttl: 110), for: id)
        lan.core.receive(.negativeAnswerAdded(key, LinkID(interfaceIndex: 3, family: .ipv4), ttl: 90), for: id)
        lan.pump()
        #expect(results() == ["+none@2", "+none@3"], "once per interface")
        let record = ResourceRecord(
            name: "box.local.", ttl: 120,
            data: .aaaa(IPv6Address(high: 0xFE80_0000_0000_0000, low: 5)))
        lan.core.receive(.negativeAnswerRemoved(key, SessionHarness.ipv4), for: id)
        lan.core.receive(.recordAdded(record, SessionHarness.ipv4), for: id)
        lan.pump()
        #expect(results() == ["-none@2", "+record@2"], "NoSuchRecord ends before the record is shown")
        lan.core.receive(.recordRemoved(record, SessionHarness.ipv4), for: id)
        lan.pump()
        #expect(results() == ["-record@2", "+none@2"], "the IPv6 link's negative answer stands")
    }

    @Test("operations are limited per connection and per user, operators excepted; connections per user too")
    func limits() {
        var limits = SessionLimits()
        limits.operationsPerConnection = 2
        limits.operationsPerUser = 3
        limits.connectionsPerUser = 2
        limits.connections = 10
        limits.operatorReserve = 2
        let lan = SessionHarness(limits: limits)
        #expect(lan.connect(1, user: Self.app))
        #expect(lan.connect(2, user: Self.app))
        #expect(!lan.connect(3, user: Self.app), "the user's share of connections")
        for id in 4...6 { #expect(lan.connect(id, user: 0, isOperator: true), "operators are not held to a share") }
        #expect(lan.browse(1, 1, "_a._tcp") == .noError)
        #expect(lan.browse(1, 2, "_b._tcp") == .noError)
        #expect(lan.browse(1, 3, "_c._tcp") == .noMemory, "the connection's limit")
        #expect(lan.browse(2, 1, "_d._tcp") == .noError)
        #expect(lan.browse(2, 2, "_e._tcp") == .noMemory, "the user's share, over both connections")
        lan.gate.operators = [0]
        #expect(lan.browse(4, 1, "_a._tcp") == .noError)
        #expect(lan.browse(4, 2, "_b._tcp") == .noError)
        #expect(lan.browse(5, 1, "_c._tcp") == .noError)
        #expect(lan.browse(5, 2, "_d._tcp") == .noError, "an operator's user has no share")
        #expect(lan.browse(1, 2, "_b._tcp") == .badParam, "a context in use")
        for id in 7...9 { #expect(lan.connect(id, user: 600 + UInt32(id))) }
        #expect(!lan.connect(10, user: 700), "the last connections are the operators'")
        #expect(lan.connect(10, user: 0, isOperator: true))
        #expect(lan.connect(11, user: 0, isOperator: true))
        #expect(!lan.connect(12, user: 0, isOperator: true), "and then none at all")
        #expect(lan.log.contains { $0.level == .warning && $0.text.contains("its share") })
    }

    @Test("closing a connection ends its operations: registrations withdrawn, browses out of their group")
    func closeEndsOperations() throws {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        lan.connect(2, user: Self.other)
        _ = lan.browse(1, 1, "_ipp._tcp")
        _ = lan.browse(2, 1, "_ipp._tcp")
        lan.request(1, 2, .registerService(RegisterServiceRequest(name: "Mine", regtype: "_http._tcp", port: 80)))
        lan.request(1, 3, .query(QueryRecordRequest(name: "box.local.", rrtype: 1)))
        let started = lan.takeCommands()
        let own = started.compactMap { command -> OperationID? in
            switch command {
            case .register(let id, _), .query(let id, _, _, _, _): return id
            default: return nil
            }
        }
        #expect(own.count == 2)
        lan.core.close(ConnectionID(1))
        lan.pump()
        #expect(Set(Self.cancels(lan.takeCommands())) == Set(own), "the group's browse stays for connection 2")
        #expect(lan.core.connectionCount == 1 && !lan.core.hasOperations(ConnectionID(1)))
        lan.receive([Self.ptr("Printer")])
        let closedGot = lan.take(1)
        #expect(closedGot.isEmpty)
        #expect(lan.browseResults(2) == ["+Printer@2"])
        lan.core.close(ConnectionID(2))
        lan.pump()
        #expect(Self.cancels(lan.takeCommands()).count == 1, "the last member gone, the engine browse ends")
        #expect(lan.core.operationCounts.operations == 0)
    }

    @Test("a query made with kDNSServiceFlagsTimeout ends after 5 s with Timeout, once")
    func timeout() {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        lan.request(1, 9, .query(QueryRecordRequest(flags: .timeout, name: "box.local.", rrtype: 1)))
        _ = lan.takeCommands()
        lan.run(for: 4_900)
        #expect(lan.take(1).isEmpty)
        lan.run(for: 200)
        let replies = lan.take(1)
        #expect(replies.count == 1)
        if case .query(let reply) = replies.first?.reply {
            #expect(reply.error == .timeout)
        } else {
            Issue.record("no query reply")
        }
        #expect(Self.cancels(lan.takeCommands()).count == 1)
        #expect(!lan.core.hasOperations(ConnectionID(1)))
        #expect(lan.core.nextDeadline == nil)
    }

    @Test("when the connecting program ends, its operations end with NoAuth and it is told why")
    func programEnded() {
        let lan = SessionHarness()
        lan.connect(1, user: Self.app)
        _ = lan.browse(1, 1, "_ipp._tcp")
        _ = lan.takeCommands()
        lan.core.endProgram(of: ConnectionID(1), reason: "pid 1001 has exited")
        lan.pump()
        #expect(lan.browseResults(1) == ["error \(DNSServiceError.noAuth)"])
        #expect(Self.cancels(lan.takeCommands()).count == 1)
        let header = IPCHeader(dataLength: 0, operation: RequestOperation.getProperty.rawValue)
        let outcome = lan.core.handle(
            DecodedRequest(
                header: header,
                request: .getProperty(
                    GetPropertyRequest(name: IPCConstants.permissionExplanationProperty)), statusReturn: .none),
            on: ConnectionID(1), at: 0)
        guard case .property(let answer) = outcome else {
            Issue.record("no property answer")
            return
        }
        #expect(String(decoding: answer.value, as: UTF8.self).contains("pid 1001 has exited"))
    }

    @Test("a refused request says NoAuth in its status and a reply, and starts nothing")
    func refused() {
        let lan = SessionHarness()
        lan.gate.decisions[Self.app] = ScriptedGate.refused
        lan.connect(1, user: Self.app)
        #expect(lan.browse(1, 1, "_ipp._tcp") == .noAuth)
        #expect(lan.browseResults(1) == ["error \(DNSServiceError.noAuth)"])
        #expect(lan.takeCommands().isEmpty)
        #expect(!lan.core.hasOperations(ConnectionID(1)))
        #expect(lan.log.contains { $0.level == .notice && $0.text.contains("refused browse") })
    }
}
