import HeraldIPC
import Testing

@testable import HeraldSession

/// What the log shows of refused requests, and what the permission explanation answers for (issue 29).
@Suite("Refused requests in the log")
struct RefusalLogTests {
    /// Every line a log asked for, as the daemon would write it (all at notice level).
    final class Lines {
        var all: [String] = []
    }

    func logger() -> (Lines, Lines) {
        let lines = Lines()
        return (lines, lines)
    }

    @Test("once per client and reason, with what was asked and why, at notice level")
    func oncePerClientAndReason() {
        let (logger, lines) = logger()
        let log = RefusalLog()
        for _ in 0..<5 {
            logger.all += log.refused(
                clientID: 1, pid: 10, status: .badParam, request: "browse \"_a b._tcp\" in \"\"",
                reason: "not a type", now: 0
            ).map { "notice " + $0 }
        }
        logger.all += log.refused(
            clientID: 1, pid: 10, status: .unsupported, request: "operation 14", reason: "port mapping",
            now: 0
        ).map { "notice " + $0 }
        logger.all += log.refused(
            clientID: 2, pid: 11, status: .badParam, request: "browse \"_a b._tcp\" in \"\"",
            reason: "not a type", now: 0
        ).map { "notice " + $0 }
        #expect(
            lines.all == [
                "notice app socket: refused browse \"_a b._tcp\" in \"\" for client 1 (pid 10): BadParam (-65540): not a type",
                "notice app socket: refused operation 14 for client 1 (pid 10): Unsupported (-65544): port mapping",
                "notice app socket: refused browse \"_a b._tcp\" in \"\" for client 2 (pid 11): BadParam (-65540): not a type",
            ])
        // A client that went away and a new one with the same number (numbers are not reused, but the memory goes).
        log.forget(clientID: 1)
        logger.all += log.refused(
            clientID: 1, pid: 10, status: .badParam, request: "browse \"_a b._tcp\" in \"\"",
            reason: "not a type", now: 0
        ).map { "notice " + $0 }
        #expect(lines.all.count == 4)
    }

    @Test("at most 20 lines every 10 s over all clients, then a line saying how many were left out")
    func rateLimited() {
        let (logger, lines) = logger()
        let log = RefusalLog()
        for client in 0..<50 {
            logger.all += log.refused(
                clientID: client, pid: Int32(100 + client), status: .noAuth, request: "browse \"_x._tcp\"",
                reason: "unregistered", now: 1_000
            ).map { "notice " + $0 }
        }
        #expect(lines.all.count == RefusalLog.linesPerWindow)
        logger.all += log.refused(
            clientID: 99, pid: 199, status: .noAuth, request: "browse \"_x._tcp\"", reason: "unregistered",
            now: 1_000 + RefusalLog.windowMilliseconds
        ).map { "notice " + $0 }
        #expect(lines.all.count == RefusalLog.linesPerWindow + 2)
        #expect(
            lines.all[RefusalLog.linesPerWindow]
                == "notice app socket: 30 more refusals were not logged (at most 20 lines every 10 s)")
    }

    @Test("a refusal that is not a permission decision is explained as such; strings a client sent are escaped")
    func explanationAndEscapes() {
        let text = RefusalLog.explanation(.unsupported, "port mapping")
        #expect(text.hasPrefix("unsupported: port mapping"))
        #expect(text.contains("not a permission decision"))
        #expect(RefusalLog.shown("a\u{1b}[31m\"b") == "\"a\\u{1b}[31m\\\"b\"")
    }
}
