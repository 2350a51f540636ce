@testable import HeraldDaemon
import HeraldEngine
import HeraldIPC
@testable import HeraldWire
import Testing

@Suite("Replies batched for many clients")
struct ReplyBatchTests {
    static func client(_ id: Int) -> AppClient { AppClient(id: id, fd: -1, identity: nil) }

    static func shared(_ instance: String) -> SharedReply {
        SharedReply(.browse(BrowseReply(flags: .add, interfaceIndex: 2, name: instance, regtype: "_http._tcp.",
                                        domain: "local.")))
    }

    @Test("a shared reply is one body however many clients get it, and again one in the next batch")
    func sharedReplyIsOneBody() throws {
        var batch = ReplyBatch()
        let reply = Self.shared("Printer")
        let clients = (1...3).map(Self.client)
        for (index, client) in clients.enumerated() {
            batch.append(reply, to: client, context: ClientContext(rawValue: UInt64(index)))
        }
        batch.append(.asyncError(AsyncErrorReply(error: .noAuth)), to: clients[0], context: ClientContext(rawValue: 9))
        let first = batch.take()
        #expect(first.bodies.count == 2)
        #expect(first.entries.map(\.body) == [0, 0, 0, 1])
        #expect(first.entries.map(\.context.rawValue) == [0, 1, 2, 9])
        #expect(first.entries.map(\.client.id) == [1, 2, 3, 1])
        #expect(batch.isEmpty)

        batch.append(.asyncError(AsyncErrorReply(error: .noAuth)), to: clients[1], context: ClientContext(rawValue: 5))
        batch.append(reply, to: clients[1], context: ClientContext(rawValue: 1))
        let second = batch.take()
        #expect(second.bodies.count == 2, "the shared reply is queued again in a new batch")
        #expect(second.entries.map(\.body) == [0, 1])
        if case .browse(let browse) = second.bodies[1] {
            #expect(browse.name == "Printer")
        } else {
            Issue.record("the second body is not the shared browse reply: \(second.bodies[1])")
        }
    }

    @Test("browses of a type share one copy of its key when they spell it alike; the table starts afresh at its limit")
    func sharedKeys() throws {
        func key(_ type: String, _ interface: Int? = nil) throws -> BrowseGroup.Key {
            BrowseGroup.Key(type: try ServiceType(type), interface: interface)
        }
        var keys = SharedValues<BrowseGroup.Key>(limit: 3)
        let first = keys.shared(try key("_http._tcp"))
        let again = keys.shared(try key("_http._tcp"))
        #expect(again == first)
        #expect(again.type.fullName.storage === first.type.fullName.storage)
        let otherSpelling = keys.shared(try key("_HTTP._tcp"))
        #expect(otherSpelling != first, "a type spelled otherwise is a key of its own")
        #expect(otherSpelling.type.description == "_HTTP._tcp")
        #expect(keys.shared(try key("_http._tcp", 2)) != first, "so is the type on one interface")
        #expect(keys.count == 3)
        let fourth = keys.shared(try key("_ssh._tcp"))
        #expect(keys.count == 1, "past the limit the table holds only the newest value")
        #expect(keys.shared(try key("_ssh._tcp")).type.fullName.storage === fourth.type.fullName.storage)
        #expect(keys.shared(try key("_http._tcp")).type.fullName.storage !== first.type.fullName.storage)
    }
}
