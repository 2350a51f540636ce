import HeraldIPC

/// `kDNSServiceFlagsTimeout` (``RequestTimeouts``): where mDNSResponder honours it, on record queries and address
/// lookups.
extension AppSocketServer {
    /// Starts the clock of a query or address lookup that asked for a timeout.
    func scheduleTimeout(of operation: AppOperation, client: AppClient, types: [UInt16]) {
        timeouts.add(operation, of: client, types: types, loop: loop, logger: logger) { [unowned self] due in
            for entry in due {
                guard let client = entry.client else { continue }
                self.expire(entry.operation, of: client, types: entry.types)
            }
            self.flushReplies()
        }
    }

    /// Ends an operation whose time is up, unless the client cancelled it or went away: its engine operations
    /// stop and the client gets one reply carrying kDNSServiceErr_Timeout per record type it asked for.
    private func expire(_ operation: AppOperation, of client: AppClient, types: [UInt16]) {
        guard !client.closed, clients[client.id] === client, client.operations[operation.context] === operation else {
            return
        }
        client.operations[operation.context] = nil
        if !operation.parked { halt([operation]) }
        switch operation.kind {
        case .query(let name, let type, let recordClass):
            queue(.query(QueryRecordReply(flags: [], interfaceIndex: 0, error: .timeout, fullname: name.dnssdFullName,
                                          rrtype: type.rawValue, rrclass: recordClass == 255 ? 1 : recordClass,
                                          rdata: [], ttl: 0)),
                  to: client, context: operation.context)
        case .addressLookup(let hostname):
            for type in types {
                queue(.addrInfo(AddrInfoReply(flags: [], interfaceIndex: 0, error: .timeout, hostname: hostname,
                                              rrtype: type, rrclass: 1, rdata: [], ttl: 0)),
                      to: client, context: operation.context)
            }
        default:
            break
        }
    }
}
