import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire
import Testing

@testable import HeraldSession

/// glibc's `malloc_usable_size` (declared in `<malloc.h>`, which the Glibc module leaves out): the size of the heap
/// block an object lives in.
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ block: UnsafeMutableRawPointer) -> Int

/// What an operation keeps: clients start thousands of resolves at once (the office benchmark, Benchmarks/README.md),
/// and heraldd's peak memory rests on this.
@Suite("An operation's own state: the request and caller kept once, rare state apart")
struct SessionOperationBudgetTests {
    static func operations(_ lan: SessionHarness, _ connection: Int) -> [SessionOperation] {
        (lan.core.sessions[ConnectionID(connection)]?.operations.values ?? [:].values)
            .sorted { $0.context.rawValue < $1.context.rawValue }
    }

    @Test("a connection's resolves share their caller, keep their request as their kind, and stay small")
    func resolvesShareTheirCaller() throws {
        let lan = SessionHarness()
        lan.connect(1, user: 501)
        lan.connect(2, user: 502)
        for context in 1...3 {
            let request = ResolveRequest(name: "Printer \(context)", regtype: "_ipp._tcp", domain: "local.")
            #expect(lan.request(1, UInt64(context), .resolve(request)) == .noError)
        }
        #expect(
            lan.request(2, 1, .resolve(ResolveRequest(name: "Printer 1", regtype: "_ipp._tcp", domain: "local.")))
                == .noError)
        let mine = Self.operations(lan, 1)
        let theirs = Self.operations(lan, 2)
        #expect(mine.count == 3 && theirs.count == 1)
        let shared = try #require(mine.first?.judgedCaller)
        #expect(mine.allSatisfy { $0.judgedCaller === shared }, "one caller, held once")
        #expect(mine.first?.caller?.uid == 501 && theirs.first?.caller?.uid == 502)
        #expect(theirs.first?.judgedCaller !== shared, "another connection's caller is its own")
        for operation in mine + theirs {
            guard case .resolve(let instance) = operation.kind else {
                Issue.record("not a resolve: \(operation.kind)")
                continue
            }
            #expect(operation.gated == .resolve(instance))
            #expect(operation.snapshot.gated == .resolve(instance))
            let block = mallocUsableSize(Unmanaged.passUnretained(operation).toOpaque())
            #expect(block <= 256, "a resolve's operation takes \(block) bytes (over 500 with copies of its own)")
        }
    }

    @Test("the command that starts a resolve, kept by its operation, does not take a registration's room")
    func startCommandBudget() {
        #expect(MemoryLayout<EngineCommand>.stride <= 48, "\(MemoryLayout<EngineCommand>.stride) bytes")
    }

    @Test("a request the kind does not name is kept as judged; a caller's change is not shared")
    func otherRequestsAreKept() throws {
        let lan = SessionHarness()
        lan.connect(1, user: 501)
        let register = RegisterServiceRequest(name: "Mine", regtype: "_http._tcp", port: 80)
        #expect(lan.request(1, 1, .registerService(register)) == .noError)
        lan.gate.users[ConnectionID(1)] = 503
        #expect(
            lan.request(1, 2, .resolve(ResolveRequest(name: "Printer", regtype: "_ipp._tcp", domain: "local.")))
                == .noError)
        let operations = Self.operations(lan, 1)
        #expect(operations.count == 2)
        #expect(operations.first?.gated == .register(try ServiceType("_http._tcp")))
        #expect(operations.first?.caller?.uid == 501 && operations.last?.caller?.uid == 503)
        #expect(operations.first?.judgedCaller !== operations.last?.judgedCaller)
        let operation = try #require(operations.first)
        #expect(operation.updatedRecord == nil && operation.groupKey == nil)
        operation.updatedRecord = (.txt(TXTRecord.empty), 120)
        #expect(operation.updatedRecord?.ttl == 120)
        operation.gated = nil
        #expect(operation.gated == nil && operation.updatedRecord?.ttl == 120)
    }
}
