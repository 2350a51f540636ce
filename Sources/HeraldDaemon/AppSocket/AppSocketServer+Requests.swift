import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldSession
import HeraldWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Decoding requests for the core, and writing each request's status where the protocol says it goes.
extension AppSocketServer {
    func handle(_ frame: IPCFrame, from client: AppClient) {
        let now = MonotonicClock.milliseconds()
        let decoded: DecodedRequest
        do {
            decoded = try DecodedRequest.decode(
                header: frame.header, body: frame.body, connection: client.connectionState)
        } catch {
            let unserved: String? =
                switch error {
                case .unknownOperation(let code): "operation \(code) is not part of the protocol Herald speaks"
                case .unsupportedRequest(let operation):
                    "Herald does not implement \(operation) (operation \(operation.rawValue))"
                default: nil
                }
            if let unserved {
                // An operation this daemon does not know or does not implement (NAT port mapping, Apple's private
                // ones): Unsupported, as mDNSResponder's clients expect, and the connection stays usable. On a
                // shared connection the status goes where the client waits for it: the error socket that came
                // with the frame.
                let route: StatusReturn =
                    client.connectionState == .established && !client.passedDescriptors.isEmpty
                        && !frame.header.flags.contains(.noErrorSocket) ? .passedSocket : .inBand
                client.connectionState = .established
                core.noteRefusal(
                    .unsupported, of: "operation \(frame.header.operation)", reason: unserved,
                    on: client.connectionID, at: now)
                writeLog()
                reportStatus(.unsupported, via: route, context: frame.header.context, to: client)
                return
            }
            disconnect(
                client, reason: "malformed \(frame.header.requestOperation.map { "\($0)" } ?? "request"): \(error)")
            return
        }
        client.lastActive = now
        client.connectionState = .established
        handlingRequest = true
        let outcome = core.handle(decoded, on: client.connectionID, at: now)
        runEngineCommands()
        handlingRequest = false
        writeLog()
        guard !client.closed else {
            flushReplies()
            return
        }
        switch outcome {
        case .status(let status, let route):
            reportStatus(status, via: route, context: decoded.header.context, to: client)
        case .property(let answer):
            send(answer.encoded, to: client)
        case .nothing:
            break
        }
        flushReplies()
    }

    /// Sends a request's status where the protocol says it goes (docs/app-socket.md, "Where a request's status
    /// goes"): in band on the first request, on the passed error socket for requests on a shared connection, or on
    /// a socket the client named.
    private func reportStatus(
        _ status: DNSServiceError, via route: StatusReturn, context: ClientContext, to client: AppClient
    ) {
        switch route {
        case .inBand:
            // Straight to the client: replies queued before the status stay queued and follow it.
            send(StatusWord.encode(status), to: client)
        case .passedSocket:
            // The status goes on another socket: replies the operation produced at once are sent first, so that a
            // client reading the status finds them already waiting on the connection (a parked operation's NoAuth).
            flushReplies()
            guard !client.passedDescriptors.isEmpty else {
                disconnect(client, reason: "a shared-connection request came without its error socket")
                return
            }
            let descriptor = client.passedDescriptors.removeFirst()
            let bytes = StatusWord.encode(status)
            _ = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            close(descriptor)
        case .namedSocket(let path):
            flushReplies()
            // The daemon connects for the client: only to a socket of the client's own user (any, for root), and
            // never blocking, since a listener that does not accept must not hold the daemon.
            guard let identity = client.identity else { return }
            do {
                let descriptor = try UnixSocket.connectChecked(to: path, owner: identity.uid == 0 ? nil : identity.uid)
                let bytes = StatusWord.encode(status)
                _ = bytes.withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                close(descriptor)
            } catch {
                logger.notice("app socket: client \(client.id): status not sent to its error socket: \(error)")
            }
        case .asyncErrorReply, .none:
            // The core queues an AsyncErrorReply itself; nothing else goes anywhere.
            break
        }
    }
}
