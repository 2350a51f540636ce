import HeraldEngine
import HeraldIPC

/// The replies produced while handling one batch of engine actions (or one request), sent together at its end.
/// Each entry names a connection, the context of its operation, and a body: a reply that several entries may share.
package struct ReplyBatch: Sendable {
    package struct Entry: Hashable, Sendable {
        package let connection: ConnectionID
        package let context: ClientContext
        /// The index of the reply in `bodies`.
        package let body: Int
        /// The IP family of the link the reply's result came over, for a core that reports families
        /// (``SessionCore/reportsFamilies``); nil otherwise, and for replies that are no result.
        package let family: IPFamily?
        /// True for all but each connection's last reply of the batch (kDNSServiceFlagsMoreComing), set by
        /// ``take()``.
        package internal(set) var moreComing = false
    }

    package private(set) var entries: [Entry] = []
    package private(set) var bodies: [Reply] = []

    package var isEmpty: Bool { entries.isEmpty }

    /// Queues `reply` for one client.
    mutating func append(_ reply: Reply, to connection: ConnectionID, context: ClientContext, family: IPFamily? = nil) {
        append(body: add(reply), to: connection, context: context, family: family)
    }

    /// Adds a reply that entries of this batch can then share; returns its body index.
    mutating func add(_ reply: Reply) -> Int {
        bodies.append(reply)
        return bodies.count - 1
    }

    /// Queues the body at `body` (from ``add(_:)`` in this batch) for one client.
    mutating func append(body: Int, to connection: ConnectionID, context: ClientContext, family: IPFamily? = nil) {
        entries.append(Entry(connection: connection, context: context, body: body, family: family))
    }

    /// Hands over the batch, each connection's replies but its last marked MoreComing, and starts an empty one.
    mutating func take() -> (entries: [Entry], bodies: [Reply]) {
        defer {
            entries = []
            bodies = []
        }
        markMoreComing()
        return (entries, bodies)
    }

    /// Marks every entry but each connection's last MoreComing.
    mutating func markMoreComing() {
        var last: [ConnectionID: Int] = [:]
        for index in entries.indices { last[entries[index].connection] = index }
        for index in entries.indices { entries[index].moreComing = last[entries[index].connection] != index }
    }
}
