import HeraldWire

/// Client operations: browse, resolve and record queries, and turning cache changes into their events.
extension MDNSEngine {
    /// Starts browsing for instances of a service type (e.g. `_http._tcp.local.`) on one interface or all.
    package mutating func browse(_ id: OperationID, type: DNSName, interfaceIndex: Int? = nil, at time: Instant) {
        start(id, ClientOperation(kind: .browse(type), interfaceIndex: interfaceIndex), at: time)
    }

    /// Starts resolving a service instance's SRV, TXT and addresses.
    package mutating func resolve(_ id: OperationID, instance: DNSName, interfaceIndex: Int? = nil, at time: Instant) {
        start(id, ClientOperation(kind: .resolve(instance), interfaceIndex: interfaceIndex), at: time)
    }

    /// Starts a continuous query for records of a name and type (`ANY` for all types). With
    /// `reportingNegativeAnswers`, a peer's NSEC record saying the type does not exist is reported too
    /// (``OperationEvent/negativeAnswerAdded(_:_:ttl:)``), and its end.
    package mutating func query(
        _ id: OperationID, name: DNSName, type: RecordType, interfaceIndex: Int? = nil,
        reportingNegativeAnswers: Bool = false, at time: Instant
    ) {
        var operation = ClientOperation(kind: .query(RecordKey(name: name, type: type)), interfaceIndex: interfaceIndex)
        operation.reportsNegativeAnswers = reportingNegativeAnswers
        start(id, operation, at: time)
    }

    /// Stops an operation of any kind; a registration is withdrawn with goodbyes.
    package mutating func cancel(_ id: OperationID, at time: Instant) {
        now = max(now, time)
        if publications[id] != nil {
            withdraw(id)
            return
        }
        guard let operation = operations.removeValue(forKey: id) else { return }
        // A dictionary never shrinks: once the last operation of a burst has gone, give its table back.
        if operations.isEmpty { operations = [:] }
        for (link, keys) in operation.keys {
            for key in keys {
                querier.unsubscribe(id, from: key, on: link)
                updateWanted(answering: key, on: link)
            }
        }
        if operation.reportsNegativeAnswers, case .query(let key) = operation.kind {
            negativeAnswerWatchers[key.name]?.remove(id)
            if negativeAnswerWatchers[key.name]?.isEmpty == true { negativeAnswerWatchers[key.name] = nil }
            for link in Array(caches.keys) { updateWanted(answering: RecordKey(name: key.name, type: .nsec), on: link) }
        }
    }

    /// The number of operations in progress (registrations included).
    package var operationCount: Int {
        operations.count + publications.count - (publications[Self.hostPublication] == nil ? 0 : 1)
    }

    /// How many operations the operation table has room for without growing (its storage, kept while it is in use).
    package var operationTableCapacity: Int { operations.capacity }

    private mutating func start(_ id: OperationID, _ operation: ClientOperation, at time: Instant) {
        now = max(now, time)
        cancel(id, at: time)
        operations[id] = operation
        if operation.reportsNegativeAnswers, case .query(let key) = operation.kind {
            negativeAnswerWatchers[key.name, default: []].insert(id)
            for link in Array(caches.keys) { updateWanted(answering: RecordKey(name: key.name, type: .nsec), on: link) }
        }
        for link in links.keys.sorted() { attach(id, to: link) }
    }

    /// Subscribes an operation's questions on a link and reports what the cache already knows.
    mutating func attach(_ id: OperationID, to link: LinkID) {
        guard let operation = operations[id], operation.applies(to: link), operation.keys[link] == nil else { return }
        operations[id]!.keys[link] = []
        for key in operation.initialKeys { subscribe(id, to: key, on: link) }
        if operation.reportsNegativeAnswers { updateNegativeAnswer(id, on: link) }
    }

    private mutating func subscribe(_ id: OperationID, to key: RecordKey, on link: LinkID) {
        guard operations[id] != nil, !(operations[id]!.keys[link]?.contains(key) ?? false) else { return }
        operations[id]!.keys[link, default: []].append(key)
        querier.subscribe(id, to: key, on: link, at: now, random: &random, cache: caches[link])
        updateWanted(answering: key, on: link)
        let cached = caches[link]?.answers(to: key) ?? []
        for record in cached { handle(.added(record.record), for: id, on: link) }
    }

    private mutating func unsubscribe(_ id: OperationID, from key: RecordKey, on link: LinkID) {
        operations[id]?.keys[link]?.removeAll { $0 == key }
        querier.unsubscribe(id, from: key, on: link)
        updateWanted(answering: key, on: link)
    }

    /// Says again whether the records answering `key` on `link` are asked for, after a question or an NSEC watcher
    /// came or went: a full cache evicts records nobody asks for first (``RecordCache/evictOne(except:newcomerExpiry:keepNewcomer:)``).
    private mutating func updateWanted(answering key: RecordKey, on link: LinkID) {
        guard caches[link] != nil else { return }
        let questions = querier
        let watchers = negativeAnswerWatchers
        caches[link]!.updateWanted(answering: key) { key in
            questions.isAsked(key, on: link) || (key.type == .nsec && watchers[key.name] != nil)
        }
    }

    /// Tells every interested operation about changes to a link's cache. Negative answers that NSEC records of the
    /// changes (or `negativeNames`, NSEC records refreshed) may begin or end are looked at once all changes are told,
    /// so that they see the cache as the batch leaves it, once per name.
    mutating func dispatch(_ changes: [CacheChange], on link: LinkID, negativeNames: [DNSName] = []) {
        var negativeNames = negativeNames
        for change in changes {
            let record: ResourceRecord
            switch change {
            case .added(let r), .removed(let r): record = r
            }
            for id in querier.subscribers(for: RecordKey(record), on: link) {
                handle(change, for: id, on: link)
            }
            if record.type == .nsec, negativeAnswerWatchers[record.name] != nil { negativeNames.append(record.name) }
            if case .removed = change {
                querier.answerRemoved(RecordKey(record), on: link, cache: caches[link], at: now, random: &random)
            }
        }
        var seen: [DNSName] = []
        for name in negativeNames where !seen.contains(name) {
            seen.append(name)
            for id in (negativeAnswerWatchers[name] ?? []).sorted() { updateNegativeAnswer(id, on: link) }
        }
    }

    private mutating func handle(_ change: CacheChange, for id: OperationID, on link: LinkID) {
        // Only the kind is read: copying the whole operation for each of a thousand browses costs more than
        // the rest of the dispatch.
        guard let index = operations.index(forKey: id) else { return }
        switch operations.values[index].kind {
        case .query:
            let negativeAnswers = operations.values[index].reportsNegativeAnswers
            switch change {
            case .added(let record):
                // A record of the type ends a negative answer before it is reported.
                if negativeAnswers { updateNegativeAnswer(id, on: link) }
                emit(.deliver(id, .recordAdded(record, link)))
            case .removed(let record):
                emit(.deliver(id, .recordRemoved(record, link)))
                if negativeAnswers { updateNegativeAnswer(id, on: link) }
            }
        case .browse(let type):
            switch change {
            case .added(let record):
                if case .ptr(let instance) = record.data, record.name == type {
                    emit(.deliver(id, .instanceAdded(instance, link)))
                }
            case .removed(let record):
                if case .ptr(let instance) = record.data, record.name == type {
                    emit(.deliver(id, .instanceRemoved(instance, link)))
                }
            }
        case .resolve(let instance):
            updateResolve(id, instance: instance, change: change, on: link)
        }
    }

    /// Reports a query's negative answer on a link when one begins or ends: a peer's live NSEC record says the
    /// type does not exist (``RecordCache/negativeAnswerEnd(for:at:)``) and no record of the type is cached.
    private mutating func updateNegativeAnswer(_ id: OperationID, on link: LinkID) {
        guard let operation = operations[id], operation.reportsNegativeAnswers, case .query(let key) = operation.kind,
            operation.keys[link] != nil, caches[link] != nil
        else { return }
        let end = caches[link]!.standingNegativeAnswerEnd(for: key, at: now)
        switch (operation.negativeAnswers[link], end) {
        case (nil, let end?):
            operations[id]!.negativeAnswers[link] = end
            emit(.deliver(id, .negativeAnswerAdded(key, link, ttl: UInt32(max(0, (end - now + 999) / 1000)))))
        case (_?, nil):
            operations[id]!.negativeAnswers[link] = nil
            emit(.deliver(id, .negativeAnswerRemoved(key, link)))
        default:
            operations[id]!.negativeAnswers[link] = end
        }
    }

    private mutating func updateResolve(_ id: OperationID, instance: DNSName, change: CacheChange, on link: LinkID) {
        var state = operations[id]!.resolveStates[link] ?? ClientOperation.ResolveState()
        let oldTarget = state.srv?.target
        switch change {
        case .added(let record):
            switch record.data {
            case .srv(let srv) where record.name == instance: state.srv = srv
            case .txt(let txt) where record.name == instance: state.txt = txt
            case .a, .aaaa:
                if let address = Self.address(of: record), record.name == state.srv?.target,
                    !state.addresses.contains(address)
                {
                    state.addresses.append(address)
                }
            default: break
            }
        case .removed(let record):
            // The record in use went away: another member of its set still cached takes over, if any.
            let remaining =
                caches[link]?.records(for: RecordKey(record)).map(\.record.data).filter { $0 != record.data } ?? []
            switch record.data {
            case .srv(let srv) where record.name == instance && state.srv == srv:
                state.srv =
                    remaining.lazy.compactMap { if case .srv(let other) = $0 { return other } else { return nil } }.last
            case .txt(let txt) where record.name == instance && state.txt == txt:
                state.txt =
                    remaining.lazy.compactMap { if case .txt(let other) = $0 { return other } else { return nil } }.last
            case .a, .aaaa:
                if let address = Self.address(of: record) { state.addresses.removeAll { $0 == address } }
            default: break
            }
        }
        operations[id]!.resolveStates[link] = state
        if oldTarget != state.srv?.target {
            // Follow the SRV target: ask for its addresses instead of the old one's.
            operations[id]!.resolveStates[link]!.addresses = []
            if let oldTarget {
                unsubscribe(id, from: RecordKey(name: oldTarget, type: .a), on: link)
                unsubscribe(id, from: RecordKey(name: oldTarget, type: .aaaa), on: link)
            }
            if let target = state.srv?.target {
                subscribe(id, to: RecordKey(name: target, type: .a), on: link)
                subscribe(id, to: RecordKey(name: target, type: .aaaa), on: link)
            }
        }
        guard let current = operations[id]?.resolveStates[link], let srv = current.srv, let txt = current.txt else {
            return
        }
        let result = ResolvedService(
            instance: instance, link: link, target: srv.target, port: srv.port,
            priority: srv.priority, weight: srv.weight, txt: txt, addresses: current.addresses)
        if result != current.lastReported {
            operations[id]!.resolveStates[link]!.lastReported = result
            emit(.deliver(id, .resolved(result)))
        }
    }

    static func address(of record: ResourceRecord) -> IPAddress? {
        switch record.data {
        case .a(let address): return .v4(address)
        case .aaaa(let address): return .v6(address)
        default: return nil
        }
    }
}
