import HeraldIPC
import HeraldWire
import Testing

@testable import HeraldSession

@Suite("Replies batched for many clients")
struct ReplyBatchTests {
    static func client(_ id: Int) -> ConnectionID { ConnectionID(id) }

    static func found(_ instance: String) -> Reply {
        .browse(BrowseReply(flags: .add, interfaceIndex: 2, name: instance, regtype: "_http._tcp.", domain: "local."))
    }

    @Test("a reply added once is one body however many clients get it; a batch taken leaves an empty one")
    func sharedReplyIsOneBody() throws {
        var batch = ReplyBatch()
        let clients = (1...3).map(Self.client)
        let body = batch.add(Self.found("Printer"))
        for (index, client) in clients.enumerated() {
            batch.append(body: body, to: client, context: ClientContext(rawValue: UInt64(index)))
        }
        batch.append(.asyncError(AsyncErrorReply(error: .noAuth)), to: clients[0], context: ClientContext(rawValue: 9))
        let first = batch.take()
        #expect(first.bodies.count == 2)
        #expect(first.entries.map(\.body) == [0, 0, 0, 1])
        #expect(first.entries.map(\.context.rawValue) == [0, 1, 2, 9])
        #expect(first.entries.map(\.connection.rawValue) == [1, 2, 3, 1])
        #expect(first.entries.map(\.moreComing) == [true, false, false, false], "all but each connection's last")
        #expect(batch.isEmpty && batch.bodies.isEmpty)

        batch.append(.asyncError(AsyncErrorReply(error: .noAuth)), to: clients[1], context: ClientContext(rawValue: 5))
        let second = batch.take()
        #expect(second.bodies.count == 1, "bodies start afresh with each batch")
        #expect(second.entries.map(\.body) == [0])
    }

    @Test("browses share a group only for the same spelling of the type and the same interface")
    func groupKeys() throws {
        func key(_ type: String, _ interface: Int? = nil) throws -> BrowseGroup.Key {
            BrowseGroup.Key(type: try ServiceType(type), interface: interface)
        }
        #expect(try key("_http._tcp") == key("_http._tcp"))
        #expect(try key("_http._tcp", 2) == key("_http._tcp", 2))
        #expect(try key("_HTTP._tcp") != key("_http._tcp"), "the type compares ignoring case; the key does not")
        #expect(try key("_http._tcp", 2) != key("_http._tcp"))
        #expect(try key("_printer._sub._http._tcp") != key("_http._tcp"))
        let keys: Set = [try key("_http._tcp"), try key("_http._tcp"), try key("_HTTP._tcp")]
        #expect(keys.count == 2)
    }
}
