import HeraldWire
import Testing

@testable import HeraldEngine

/// The querier's table of one link's questions, against a dictionary doing the same.
@Suite("The querier's table of questions: dense entries behind an index")
struct QuestionTableTests {
    static func key(_ n: Int, _ type: RecordType = .srv) -> RecordKey {
        RecordKey(name: try! DNSName("Instance \(n)._ipp._tcp.local."), type: type)
    }

    static func question(_ n: Int) -> ContinuousQuery {
        ContinuousQuery(
            key: key(n), subscriber: OperationID(UInt64(n)), firstQueryAt: Instant(milliseconds: Int64(n)),
            earliest: Instant(milliseconds: 0))
    }

    @Test("what goes in is found under its key (in any case), and what is taken out is gone, with the rest intact")
    func matchesADictionary() {
        var table = QuestionTable()
        var model: [RecordKey: Int] = [:]
        for n in 0..<3000 {
            for type in [RecordType.srv, .txt] {
                table[Self.key(n, type)] = Self.question(n)
                model[Self.key(n, type)] = n
            }
        }
        // Every third instance goes, so entries move into the holes left.
        for n in stride(from: 0, to: 3000, by: 3) {
            table[Self.key(n, .srv)] = nil
            model[Self.key(n, .srv)] = nil
        }
        table[Self.key(99_999)] = nil  // not there: nothing changes
        #expect(table.keys.count == model.count && table.values.count == model.count)
        for (key, n) in model {
            #expect(table[key]?.nextQueryAt == Instant(milliseconds: Int64(n)))
        }
        #expect(table[Self.key(3, .srv)] == nil && table[Self.key(3, .txt)] != nil)
        let upper = RecordKey(name: try! DNSName("INSTANCE 4._IPP._TCP.LOCAL."), type: .srv)
        #expect(table[upper]?.nextQueryAt == Instant(milliseconds: 4))
        // Everything out: empty again, and it can fill again.
        for key in model.keys { table[key] = nil }
        #expect(table.isEmpty)
        table[Self.key(1)] = Self.question(1)
        #expect(table.keys == [Self.key(1)])
    }

    @Test("a question changed in place keeps its subscribers; a missing one is not made")
    func modifyInPlace() {
        var table = QuestionTable()
        table[Self.key(1)] = Self.question(1)
        let found = table.modify(Self.key(1)) { $0.subscribers.insert(OperationID(7)) }
        #expect(found != nil)
        #expect(table[Self.key(1)]?.subscribers.sorted == [OperationID(1), OperationID(7)])
        #expect(table.modify(Self.key(2)) { $0.subscribers.insert(OperationID(7)) } == nil)
        #expect(table[Self.key(2)] == nil && table.keys.count == 1)
        // An entry costs its key and question in the arrays, and 8 bytes in the index.
        #expect(MemoryLayout<RecordKey>.stride + MemoryLayout<ContinuousQuery>.stride <= 64)
    }
}
