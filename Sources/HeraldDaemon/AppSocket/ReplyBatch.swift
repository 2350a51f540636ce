import HeraldIPC

/// The replies produced while handling one batch of engine actions (or one request), sent together at its end.
/// Each entry names a client, the context of its operation, and a body: a reply that several entries may share.
struct ReplyBatch {
    struct Entry {
        let client: AppClient
        let context: ClientContext
        /// The index of the reply in `bodies`.
        let body: Int
    }

    private(set) var entries: [Entry] = []
    private(set) var bodies: [Reply] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Queues `reply` for one client.
    mutating func append(_ reply: Reply, to client: AppClient, context: ClientContext) {
        append(body: add(reply), to: client, context: context)
    }

    /// Adds a reply that entries of this batch can then share; returns its body index.
    mutating func add(_ reply: Reply) -> Int {
        bodies.append(reply)
        return bodies.count - 1
    }

    /// Queues the body at `body` (from ``add(_:)`` in this batch) for one client.
    mutating func append(body: Int, to client: AppClient, context: ClientContext) {
        entries.append(Entry(client: client, context: context, body: body))
    }

    /// Hands over the batch and starts an empty one.
    mutating func take() -> (entries: [Entry], bodies: [Reply]) {
        defer {
            entries = []
            bodies = []
        }
        return (entries, bodies)
    }
}
