import HeraldClient
import HeraldIPC
import HeraldWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The entry point of HeraldKit: browse, resolve, look up and advertise DNS-SD services through the Herald
/// daemon (`heraldd`), with `async`/`await`.
///
/// Every operation runs on its own connection to the daemon's app socket and ends there when it is
/// cancelled. When the app is not (yet) permitted to use the local network, the daemon parks operations:
/// browses and registrations report ``OperationState/waiting(_:reason:)`` and carry on by themselves once
/// an operator grants access.
public struct Herald: Sendable {
    /// The daemon's app socket.
    public let socketPath: String

    /// Talks to the daemon at `socketPath` when given, else at `DNSSD_UDS_PATH` when that is set and not
    /// empty, else at the default path.
    public init(socketPath: String? = nil) {
        var environment: [String: String] = [:]
        if let value = getenv(IPCConstants.socketPathEnvironmentVariable) {
            environment[IPCConstants.socketPathEnvironmentVariable] = String(cString: value)
        }
        self.socketPath = SocketLocation.appSocketPath(explicit: socketPath, environment: environment)
    }

    /// Browses for instances of `type` (such as `_tictactoe._tcp`; `_type._tcp,_subtype` for a subtype).
    /// Nothing is sent before iteration starts.
    public func browse(for type: String, domain: String = "local.", interfaceIndex: UInt32 = 0) -> ServiceBrowser {
        ServiceBrowser(type: type, domain: domain, interfaceIndex: interfaceIndex, socketPath: socketPath)
    }

    /// Resolves `instance` to its host, port and TXT record, then looks up the host's addresses.
    ///
    /// Waits for the first answer for at most `timeout`; addresses are then collected for `addressTimeout`
    /// at most, and for `settle` after the first one (IPv4 and IPv6 answers come separately). A parked
    /// resolve waits for permission until `timeout`, then throws ``HeraldError/notPermitted(reason:)``.
    public func resolve(
        _ instance: ServiceInstance, interfaceIndex: UInt32 = 0, timeout: Duration = .seconds(5),
        addressTimeout: Duration = .seconds(3), settle: Duration = .milliseconds(300)
    ) async throws -> ResolvedService {
        let request = Request.resolve(
            ResolveRequest(
                interfaceIndex: interfaceIndex, name: instance.name,
                regtype: instance.type, domain: instance.domain))
        let reply = try await firstAnswer(request, timeout: timeout) { reply -> ResolveReply? in
            if case .resolve(let resolved) = reply { return resolved }
            return nil
        }
        let host = DNSName.readable(dnssdFullName: reply.hostTarget)
        let addresses = try await self.addresses(
            of: host, interfaceIndex: reply.interfaceIndex,
            timeout: addressTimeout, settle: settle, throwsWhenNone: false)
        return ResolvedService(
            instance: instance, host: host, port: reply.port, txtRecord: reply.txt,
            interfaceIndex: reply.interfaceIndex, addresses: addresses)
    }

    /// Looks up the IPv4 and IPv6 addresses of a `.local` host name (`DNSServiceGetAddrInfo`).
    ///
    /// Collects answers for `settle` after the first one, within `timeout`; throws
    /// ``HeraldError/timedOut`` (or ``HeraldError/notPermitted(reason:)`` when parked) if none came.
    public func addresses(
        of hostname: String, interfaceIndex: UInt32 = 0, timeout: Duration = .seconds(3),
        settle: Duration = .milliseconds(300)
    ) async throws -> [HostAddress] {
        try await addresses(
            of: hostname, interfaceIndex: interfaceIndex, timeout: timeout, settle: settle, throwsWhenNone: true)
    }

    // MARK: - One-shot operations

    private func addresses(
        of hostname: String, interfaceIndex: UInt32, timeout: Duration, settle: Duration, throwsWhenNone: Bool
    ) async throws -> [HostAddress] {
        let request = Request.addrInfo(
            AddrInfoRequest(
                interfaceIndex: interfaceIndex, protocol: [.ipv4, .ipv6],
                hostname: hostname))
        var found: [HostAddress] = []
        let outcome: OneShotOutcome<Never> = try await runOneShot(
            request, timeout: timeout, parked: { found.removeAll() }
        ) {
            reply, deadline in
            guard case .addrInfo(let answer) = reply, answer.rdata.count == 4 || answer.rdata.count == 16 else {
                return nil
            }
            let address = HostAddress(bytes: answer.rdata, interfaceIndex: answer.interfaceIndex)
            if answer.flags.contains(.add) {
                if !found.contains(address) { found.append(address) }
                deadline.bringForward(to: .now + settle)
            } else {
                found.removeAll { $0 == address }
            }
            return nil
        }
        if found.isEmpty && throwsWhenNone { throw outcome.failure }
        return found
    }

    /// Runs `request` until the first reply that `accept` takes, within `timeout`.
    private func firstAnswer<Answer: Sendable>(
        _ request: Request, timeout: Duration, accept: (Reply) -> Answer?
    ) async throws -> Answer {
        let outcome = try await runOneShot(request, timeout: timeout, parked: {}) { reply, _ in accept(reply) }
        if let answer = outcome.answer { return answer }
        throw outcome.failure
    }

    /// How a one-shot operation ended: with an answer, or at its deadline (parked or not).
    private struct OneShotOutcome<Answer> {
        var answer: Answer?
        var parked: Bool
        var reason: String

        /// The error for ending without an answer.
        var failure: HeraldError { parked ? .notPermitted(reason: reason) : .timedOut }
    }

    /// Runs `request` on its own connection until `timeout` (which `handle` may bring forward), handing every reply
    /// without an error to `handle` and returning as soon as it returns an answer. A NoAuth reply marks the
    /// operation parked (and calls `parked`); a later answer means it was granted. Other errors are thrown.
    private func runOneShot<Answer>(
        _ request: Request, timeout: Duration, parked onParked: () -> Void,
        handle: (Reply, OperationDeadline) -> Answer?
    ) async throws -> OneShotOutcome<Answer> {
        let operation = DaemonOperation(request, socketPath: socketPath)
        let deadline = OperationDeadline(after: timeout)
        let watcher = deadline.watch(operation)
        defer {
            watcher.cancel()
            operation.cancel()
        }
        var outcome = OneShotOutcome<Answer>(answer: nil, parked: false, reason: OperationState.parkedReason)
        for await event in operation.events {
            let replies: [Reply]
            switch event {
            case .started(let status, let first):
                guard status == .noError else { throw HeraldError.daemon(status) }
                replies = first
            case .replies(let more):
                replies = more
            case .explained(let text):
                outcome.reason = text
                continue
            case .failed(let error):
                throw HeraldError.connection(error)
            }
            for reply in replies {
                switch reply.error {
                case .noError:
                    outcome.parked = false
                    if let answer = handle(reply, deadline) {
                        outcome.answer = answer
                        return outcome
                    }
                case .noAuth:
                    outcome.parked = true
                    onParked()
                default:
                    throw HeraldError.daemon(reply.error)
                }
            }
        }
        try Task.checkCancellation()
        return outcome
    }
}
