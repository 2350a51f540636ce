import HeraldClient
import HeraldIPC

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One request run on its own connection to the daemon, read by a dedicated thread.
///
/// The thread owns the `DNSSDConnection` from connect to close, so the connection is never shared between
/// threads. It sends the request, reports the status and every reply as `events`, and closes the
/// connection when the operation is cancelled — which is what ends the operation on the daemon's side
/// (browses and queries stop, registrations are withdrawn with goodbyes). Cancelling happens through
/// `cancel()`, when the consumer of `events` stops (task cancellation included), or when the last
/// reference goes away.
final class DaemonOperation: Sendable {
    /// The operation's events; finishes when the operation ends for any reason.
    let events: AsyncStream<OperationEvent>
    private let wake: WakeSignal

    init(_ request: Request, socketPath: String) {
        let wake = WakeSignal()
        let (events, continuation) = AsyncStream.makeStream(of: OperationEvent.self, bufferingPolicy: .unbounded)
        continuation.onTermination = { _ in wake.signal() }
        self.events = events
        self.wake = wake
        let failure = DetachedThread.start(name: "HeraldKit op") {
            Self.run(request, socketPath: socketPath, wake: wake, continuation: continuation)
        }
        if let failure {
            continuation.yield(.failed(.systemCall("pthread_create", errno: failure)))
            continuation.finish()
        }
    }

    deinit {
        wake.signal()
    }

    /// Ends the operation: the thread closes the connection and `events` finishes. Safe to call twice.
    func cancel() {
        wake.signal()
    }

    /// The client context of the one operation on each connection.
    static let operationContext = ClientContext(rawValue: 1)

    /// The thread's body: connect, send, report, read until cancelled or failed.
    private static func run(
        _ request: Request, socketPath: String, wake: WakeSignal, continuation: AsyncStream<OperationEvent>.Continuation
    ) {
        defer { continuation.finish() }
        guard wake.descriptor >= 0 else {
            continuation.yield(.failed(.systemCall("eventfd", errno: ENOMEM)))
            return
        }
        do throws(DNSSDClientError) {
            let connection = try DNSSDConnection(socketPath: socketPath)
            defer { connection.close() }
            // A shared connection, as `DNSServiceCreateConnection` makes: the operation's status then comes on a
            // socket of its own, so it can never be mixed up with replies that the daemon has ready at once.
            let setup = try connection.startSharedConnection()
            guard setup == .noError else {
                continuation.yield(.started(status: setup, replies: []))
                return
            }
            let status = try connection.start(request, context: operationContext)
            let first = status == .noError ? try drain(connection, wake: wake) : []
            explainNoAuth(status: status, replies: first, socketPath: socketPath, continuation: continuation)
            continuation.yield(.started(status: status, replies: first))
            guard status == .noError else { return }
            while true {
                guard let reply = try connection.nextReceivedReply(timeout: nil, stoppingWhenReadable: wake.descriptor)
                else {
                    if isSignalled(wake) { return }
                    continue  // interrupted by a signal: wait again
                }
                let replies = [reply.reply] + (try drain(connection, wake: wake))
                explainNoAuth(status: .noError, replies: replies, socketPath: socketPath, continuation: continuation)
                continuation.yield(.replies(replies))
            }
        } catch {
            if !isSignalled(wake) { continuation.yield(.failed(error)) }
        }
    }

    /// When the daemon answered NoAuth, asks it why (on a connection of its own, as `DNSServiceGetProperty`
    /// does) and reports the explanation first. Daemons without the property answer BadParam: nothing is said.
    private static func explainNoAuth(
        status: DNSServiceError, replies: [Reply], socketPath: String,
        continuation: AsyncStream<OperationEvent>.Continuation
    ) {
        guard status == .noAuth || replies.contains(where: { $0.error == .noAuth }),
            let connection = try? DNSSDConnection(socketPath: socketPath)
        else { return }
        defer { connection.close() }
        guard let reply = try? connection.property(named: IPCConstants.permissionExplanationProperty),
            reply.status == .noError, !reply.value.isEmpty
        else { return }
        continuation.yield(.explained(String(decoding: reply.value, as: UTF8.self)))
    }

    /// Every reply already received, without waiting.
    private static func drain(_ connection: DNSSDConnection, wake: WakeSignal) throws(DNSSDClientError) -> [Reply] {
        var replies: [Reply] = []
        while let next = try connection.nextReceivedReply(timeout: .zero, stoppingWhenReadable: wake.descriptor) {
            replies.append(next.reply)
        }
        return replies
    }

    private static func isSignalled(_ wake: WakeSignal) -> Bool {
        var entry = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }
}
