import HeraldIPC

extension Herald {
    /// Advertises a service and returns once the daemon has registered it, or has parked it waiting for
    /// permission (see ``ServiceRegistration/state``). Throws when the daemon refuses it (a static
    /// ``DNSServiceError/noAuth``, a bad name) or cannot be reached.
    ///
    /// The service stays advertised while the returned handle lives and until ``ServiceRegistration/cancel()``.
    public func register(_ advertisement: ServiceAdvertisement) async throws -> ServiceRegistration {
        var flags: DNSServiceFlags = []
        if !advertisement.renameOnConflict { flags.insert(.noAutoRename) }
        let regtype = ([advertisement.type] + advertisement.subtypes).joined(separator: ",")
        let request = Request.registerService(
            RegisterServiceRequest(
                flags: flags, interfaceIndex: advertisement.interfaceIndex, name: advertisement.name ?? "",
                regtype: regtype,
                domain: advertisement.domain, port: advertisement.port, txt: try advertisement.txt.rdata()))
        let registration = ServiceRegistration(
            advertisement, operation: DaemonOperation(request, socketPath: socketPath))
        let state = await registration.settled()
        if Task.isCancelled {
            registration.cancel()
            throw CancellationError()
        }
        if case .failed(let error) = state { throw error }
        return registration
    }

    /// Advertises a service for the duration of `body`: it is withdrawn when `body` returns or throws, and
    /// so also when the task is cancelled (as soon as `body` notices).
    public func withRegistration<Result>(
        _ advertisement: ServiceAdvertisement, isolation: isolated (any Actor)? = #isolation,
        body: (ServiceRegistration) async throws -> Result
    ) async throws -> Result {
        let registration = try await register(advertisement)
        defer { registration.cancel() }
        return try await body(registration)
    }
}
