import HeraldIPC

/// A browse for one service type, delivered as an `AsyncSequence` of ``BrowseUpdate``s (like
/// `NWBrowser`'s state and result-change handlers in one stream).
///
/// The browse starts when iteration starts, on its own connection to the daemon, and ends — on the daemon's
/// side too — when the loop is left, when the iterating task is cancelled, or with ``cancel()``. The last
/// update of a browse that ended on its own has a final state (`failed`, or `cancelled`); the sequence
/// then ends. One iteration per browser value; to browse again, iterate again (a new operation starts).
///
/// ```swift
/// for await update in herald.browse(for: "_tictactoe._tcp") {
///     if case .waiting(_, let reason) = update.state { print("waiting for permission: \(reason)") }
///     for change in update.changes { print(change) }
/// }
/// ```
public struct ServiceBrowser: AsyncSequence, Sendable {
    public typealias Element = BrowseUpdate

    /// The type browsed for, such as `_tictactoe._tcp`, or `_tictactoe._tcp,_sub` for a subtype.
    public let type: String
    /// The domain (`local.`).
    public let domain: String
    /// 0 for every interface, else the index of the one interface to browse on.
    public let interfaceIndex: UInt32
    let socketPath: String
    private let canceller = Canceller()

    init(type: String, domain: String, interfaceIndex: UInt32, socketPath: String) {
        self.type = type
        self.domain = domain
        self.interfaceIndex = interfaceIndex
        self.socketPath = socketPath
    }

    /// Ends the browse on the daemon's side; iteration then yields a `cancelled` update and ends.
    public func cancel() { canceller.cancel() }

    public func makeAsyncIterator() -> Iterator {
        let request = Request.browse(BrowseRequest(interfaceIndex: interfaceIndex, regtype: type, domain: domain))
        let operation = DaemonOperation(request, socketPath: socketPath)
        canceller.attach(operation)
        return Iterator(operation: operation, canceller: canceller)
    }

    /// Reads the operation's events and turns them into updates.
    public struct Iterator: AsyncIteratorProtocol {
        private let operation: DaemonOperation
        private let canceller: Canceller
        private var events: AsyncStream<OperationEvent>.Iterator
        private var machine = BrowseStateMachine()
        private var ready: [BrowseUpdate] = []
        private var ended = false

        init(operation: DaemonOperation, canceller: Canceller) {
            self.operation = operation
            self.canceller = canceller
            self.events = operation.events.makeAsyncIterator()
        }

        public mutating func next() async -> BrowseUpdate? {
            while ready.isEmpty {
                if ended { return nil }
                guard let event = await events.next() else {
                    // The operation ended: cancelled (by the app or the task), or its thread finished.
                    ended = true
                    operation.cancel()
                    ready += machine.cancel()
                    if Task.isCancelled { return nil }
                    continue
                }
                ready += machine.handle(event)
                if machine.state.isFinal {
                    ended = true
                    operation.cancel()
                }
            }
            return ready.removeFirst()
        }
    }
}
