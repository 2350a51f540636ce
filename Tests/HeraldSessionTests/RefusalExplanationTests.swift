import Testing

@testable import HeraldSession

/// Why a process was refused is kept for the question it asks next on another connection, and only for it.
@Suite("Refusal explanations")
struct RefusalExplanationTests {
    typealias Process = RefusalExplanations.Process

    @Test("a later process given the same pid does not read another's explanation")
    func reusedPidReadsNothing() {
        var table = RefusalExplanations()
        table.record("not-determined: org.example.app has not been granted", for: Process(pid: 4242, startTime: 1000))
        #expect(table.explanation(for: Process(pid: 4242, startTime: 1000)) != nil)
        #expect(table.explanation(for: Process(pid: 4242, startTime: 1001)) == nil)
    }

    @Test("a request that is not refused forgets the explanation")
    func laterRequestClears() {
        var table = RefusalExplanations()
        let process = Process(pid: 7, startTime: 99)
        table.record("unregistered: no registered app matches this process", for: process)
        table.record(nil, for: process)
        #expect(table.explanation(for: process) == nil)
    }

    @Test("the newest processes' explanations are kept, however many are refused")
    func bounded() {
        var table = RefusalExplanations()
        let processes = (0..<2000).map { Process(pid: Int32(100 + $0), startTime: UInt64($0)) }
        for process in processes { table.record("refused \(process.pid)", for: process) }
        #expect(table.count <= 2 * RefusalExplanations.kept)
        #expect(table.explanation(for: processes.last!) == "refused \(processes.last!.pid)")
        #expect(table.explanation(for: processes.first!) == nil)
    }
}
