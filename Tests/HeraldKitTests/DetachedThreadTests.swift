import Foundation
import Synchronization
import Testing

@testable import HeraldKit

@Suite("Operation threads")
struct DetachedThreadTests {
    @Test("A detached thread runs its body once, on a thread of its own that carries its name")
    func runsOnItsOwnThread() async throws {
        let seen = Mutex<(runs: Int, thread: String?, name: String?)>((0, nil, nil))
        let caller = String(describing: pthread_self())
        let failure = DetachedThread.start(name: "HeraldKit op and more") {
            let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            seen.withLock { $0 = ($0.runs + 1, String(describing: pthread_self()), name) }
        }
        #expect(failure == nil)
        let deadline = ContinuousClock.now + .seconds(10)
        while seen.withLock({ $0.runs }) == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(50))
        let result = seen.withLock { $0 }
        #expect(result.runs == 1)
        #expect(result.thread != nil && result.thread != caller)
        // The kernel keeps 15 bytes of a thread's name.
        #expect(result.name == "HeraldKit op an\n")
    }
}
