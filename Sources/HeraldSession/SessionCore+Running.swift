import HeraldEngine
import HeraldIPC
import HeraldWire

/// Starting and stopping allowed operations: a browse of a service type joins the group of browses of its type,
/// every other operation runs engine operations of its own.
extension SessionCore {
    /// Starts an operation the gate allows (not for a client that is gone: nothing would end it).
    func run(_ operation: SessionOperation, of session: Session) {
        guard sessions[session.id] === session else { return }
        if let key = operation.groupKey {
            join(operation, of: session.id, groupKey: key)
            return
        }
        for id in operation.engineOperations { owners[id] = (session.id, operation) }
        engineCommands += operation.startCommands
    }

    /// Stops running operations, in one batch of engine work: their engine operations end (registrations say
    /// goodbye), or they leave their groups. Stopping one that does not run is harmless.
    func halt(_ operations: [SessionOperation]) {
        var ended: [OperationID] = []
        for operation in operations {
            if operation.groupKey != nil {
                if let id = leave(operation) { ended.append(id) }
                continue
            }
            ended += operation.engineOperations
            for id in operation.engineOperations { owners[id] = nil }
        }
        // A dictionary never shrinks: once the last operation of a burst has gone, give its table back.
        if owners.isEmpty { owners = [:] }
        engineCommands += ended.map { .cancel($0) }
    }

    private func join(_ operation: SessionOperation, of connection: ConnectionID, groupKey key: BrowseGroup.Key) {
        guard operation.group == nil else { return }
        if let group = browseGroups[key] {
            group.add(operation, of: connection)
            for present in group.presentInstances {
                guard let name = present.name,
                    let reply = Self.browseReply(
                        instance: name, type: key.type, interfaceIndex: present.interface,
                        added: true)
                else { continue }
                queue(.browse(reply), to: connection, context: operation.context, family: present.family)
            }
            return
        }
        let group = BrowseGroup(key: key, engineOperation: makeOperationID())
        browseGroups[key] = group
        groupOfOperation[group.engineOperation] = group
        group.add(operation, of: connection)
        let id = group.engineOperation
        engineCommands.append(.browse(id, type: key.type.fullName, interface: key.interface))
    }

    /// Takes a browse out of its group; returns the group's engine operation when it was the last member.
    private func leave(_ operation: SessionOperation) -> OperationID? {
        guard let group = operation.group else { return nil }
        group.remove(operation)
        guard group.isEmpty else { return nil }
        browseGroups[group.key] = nil
        groupOfOperation[group.engineOperation] = nil
        return group.engineOperation
    }
}
