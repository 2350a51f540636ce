import HeraldEngine
import HeraldIPC
import HeraldWire

/// A reply that many clients get at once (an instance found by every browse of a type): queued once per batch,
/// and encoded once, with only the client context written again for each client.
final class SharedReply {
    let reply: Reply
    /// Where the reply stands among the bodies of the batch numbered `batch`.
    fileprivate var body = 0
    fileprivate var batch = -1

    init(_ reply: Reply) {
        self.reply = reply
    }
}

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
    /// Counts the batches taken, so that a shared reply knows whether it is already among this one's bodies.
    private var number = 0

    var isEmpty: Bool { entries.isEmpty }

    mutating func append(_ reply: Reply, to client: AppClient, context: ClientContext) {
        bodies.append(reply)
        entries.append(Entry(client: client, context: context, body: bodies.count - 1))
    }

    mutating func append(_ shared: SharedReply, to client: AppClient, context: ClientContext) {
        if shared.batch != number {
            shared.batch = number
            shared.body = bodies.count
            bodies.append(shared.reply)
        }
        entries.append(Entry(client: client, context: context, body: shared.body))
    }

    /// Hands over the batch and starts an empty one.
    mutating func take() -> (entries: [Entry], bodies: [Reply]) {
        defer {
            entries = []
            bodies = []
            number += 1
        }
        return (entries, bodies)
    }
}
