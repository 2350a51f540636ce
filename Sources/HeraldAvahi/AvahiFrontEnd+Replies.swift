import HeraldEngine
import HeraldIPC
import HeraldSession

/// The sessions' dnssd replies, as the signals of Avahi's objects.
extension AvahiFrontEnd {
    /// Turns the replies the sessions queued into signals. `initial` is true right after a call: a NoAuth reply
    /// then says the call's operation is parked (nothing is signalled until it runs); later, that an operation the
    /// client had was refused (its browser or resolver fails with NotPermitted, its entry group with a failure).
    func processReplies(initial: Bool) {
        while true {
            let batch = core.takeReplies()
            if batch.isEmpty { break }
            for entry in batch.entries {
                guard let object = objectOfContext[entry.context], !object.failed,
                    objects[object.path] === object
                else { continue }
                deliver(
                    batch.bodies[entry.body], context: entry.context, to: object, initial: initial, family: entry.family
                )
            }
        }
    }

    private func deliver(
        _ reply: Reply, context: ClientContext, to object: AvahiObject, initial: Bool, family: IPFamily?
    ) {
        // An object made for one protocol hears only the results that came over that IP family, as Avahi's do.
        if let family, object.protocol != .unspecified, AvahiProtocol(family) != object.protocol { return }
        switch (object.kind, reply) {
        case (.serviceBrowser, .browse(let browse)), (.serviceTypeBrowser, .browse(let browse)):
            browserReply(browse, object: object, initial: initial, family: family)
        case (.serviceResolver, .resolve(let resolve)):
            resolveReply(resolve, object: object, initial: initial, family: family)
        case (.serviceResolver, .addrInfo(let address)):
            addressReply(address, object: object, initial: initial, family: family)
        case (.hostNameResolver, .addrInfo(let address)):
            hostAddressReply(address, object: object, initial: initial, family: family)
        case (.addressResolver, .query(let query)), (.recordBrowser, .query(let query)),
            (.domainBrowser, .query(let query)):
            recordReply(query, object: object, initial: initial, family: family)
        case (.entryGroup, .registerService(let register)):
            entryGroupReply(register.error, context: context, group: object, initial: initial)
        case (.entryGroup, .registerRecord(let register)):
            entryGroupReply(register.error, context: context, group: object, initial: initial)
        default:
            break
        }
    }

    /// The protocol reported for a result: the one asked for, else the IP family the result came over (IPv4 when
    /// the sessions do not say, as for a core that does not report families).
    func reportedProtocol(_ object: AvahiObject, _ family: IPFamily?) -> Int32 {
        guard object.protocol == .unspecified else { return object.protocol.rawValue }
        return family.map { AvahiProtocol($0).rawValue } ?? AvahiProtocol.inet.rawValue
    }

    /// True when a reply's error means the object waits or fails; handles both.
    func refused(_ error: DNSServiceError, object: AvahiObject, initial: Bool) -> Bool {
        guard error != .noError else {
            object.parked = false
            return false
        }
        if error == .noAuth && initial {
            object.parked = true
            deadlines.removeAll { $0.path == object.path }
        } else {
            fail(object, AvahiError(error))
        }
        return true
    }

    private func browserReply(_ reply: BrowseReply, object: AvahiObject, initial: Bool, family: IPFamily?) {
        let wasParked = object.parked
        guard !refused(reply.error, object: object, initial: initial) else { return }
        if wasParked {
            // Granted: the browser runs now, and says when it has listed what it found.
            schedule(.allForNow, for: object, after: Self.allForNowDelay)
        }
        let member = reply.flags.contains(.add) ? "ItemNew" : "ItemRemove"
        let flags = AvahiLookupResultFlags.multicast.rawValue
        let interface = Int32(truncatingIfNeeded: reply.interfaceIndex)
        if object.kind == .serviceTypeBrowser {
            let (type, domain) = AvahiNames.enumeratedType(
                name: reply.name, regtype: reply.regtype, domain: reply.domain)
            signal(
                object, member,
                [
                    .int32(interface), .int32(reportedProtocol(object, family)), .string(type), .string(domain),
                    .uint32(flags),
                ])
            return
        }
        signal(
            object, member,
            [
                .int32(interface), .int32(reportedProtocol(object, family)), .string(reply.name),
                .string(AvahiNames.undotted(reply.regtype)), .string(AvahiNames.undotted(reply.domain)),
                .uint32(flags),
            ])
    }

    private func resolveReply(_ reply: ResolveReply, object: AvahiObject, initial: Bool, family: IPFamily?) {
        guard !refused(reply.error, object: object, initial: initial) else { return }
        let hostChanged = object.resolved?.hostTarget.lowercased() != reply.hostTarget.lowercased()
        object.resolved = reply
        guard !reply.hostTarget.isEmpty else { return }
        guard hostChanged || object.lookupContext == nil else {
            // The same host with another port or TXT: found again at the address already known.
            return
        }
        if let old = object.lookupContext { cancel(old, of: object) }
        let context = makeContext()
        let lookup = AddrInfoRequest(
            interfaceIndex: reply.interfaceIndex, protocol: object.addressProtocol.dnssdProtocols,
            hostname: reply.hostTarget)
        let status = submit(.addrInfo(lookup), context: context, for: object)
        guard status == .noError else {
            objectOfContext[context] = nil
            fail(object, AvahiError(status))
            return
        }
        object.lookupContext = context
    }

    private func addressReply(_ reply: AddrInfoReply, object: AvahiObject, initial: Bool, family: IPFamily?) {
        guard !refused(reply.error, object: object, initial: initial) else { return }
        guard reply.flags.contains(.add), let resolved = object.resolved,
            let address = AvahiNames.address(reply.rdata), let addressFamily = AvahiProtocol(recordType: reply.rrtype)
        else { return }
        object.found = true
        let interface = Int32(truncatingIfNeeded: reply.interfaceIndex)
        // avahi-daemon gives a resolved TXT record's strings last first (its string lists are built by prepending),
        // and its clients print them in that order: the same order here, so that they print the same.
        let txt = Array(AvahiNames.txtStrings(resolved.txt).reversed())
        let arguments: [DBusValue] = [
            .int32(interface), .int32(reportedProtocol(object, family)), .string(object.name), .string(object.type),
            .string(object.domain), .string(AvahiNames.undotted(resolved.hostTarget)), .int32(addressFamily.rawValue),
            .string(address), .uint16(resolved.port), .byteArrays(txt),
            .uint32(AvahiLookupResultFlags.multicast.rawValue),
        ]
        answer(object, with: arguments)
    }

    private func hostAddressReply(_ reply: AddrInfoReply, object: AvahiObject, initial: Bool, family: IPFamily?) {
        guard !refused(reply.error, object: object, initial: initial) else { return }
        guard reply.flags.contains(.add), let address = AvahiNames.address(reply.rdata),
            let addressFamily = AvahiProtocol(recordType: reply.rrtype)
        else { return }
        object.found = true
        answer(
            object,
            with: [
                .int32(Int32(truncatingIfNeeded: reply.interfaceIndex)), .int32(reportedProtocol(object, family)),
                .string(object.name), .int32(addressFamily.rawValue), .string(address),
                .uint32(AvahiLookupResultFlags.multicast.rawValue),
            ])
    }

    /// A resolver's answer: `Found`, or the late answer of the call that waits for it (which ends the resolver).
    func answer(_ object: AvahiObject, with arguments: [DBusValue]) {
        if let call = object.pendingCall {
            deferredReplies.append(AvahiDeferredReply(call: call, result: .reply(arguments)))
            forget(object)
            return
        }
        signal(object, "Found", arguments)
    }
}
