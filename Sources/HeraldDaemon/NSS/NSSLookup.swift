import HeraldBroker
import HeraldEngine
import HeraldWire

/// What an NSS lookup asks the network about: a host name's addresses, or the name behind a reverse name.
enum NSSLookupKey: Hashable, CustomStringConvertible {
    case host(DNSName)
    case reverse(DNSName)

    var name: DNSName {
        switch self {
        case .host(let name), .reverse(let name): return name
        }
    }

    /// The question for the permission rules: what the queries of this lookup (A and AAAA, both judged alike, or
    /// PTR) amount to, by the rule the app socket uses too (``PermissionRequest/forQuery(name:type:)``).
    var permissionRequest: PermissionRequest {
        switch self {
        case .host(let name): return PermissionRequest.forQuery(name: name, type: .a)
        case .reverse(let name): return PermissionRequest.forQuery(name: name, type: .ptr)
        }
    }

    var description: String {
        switch self {
        case .host(let name): return "addresses of \(name)"
        case .reverse(let name): return "PTR \(name)"
        }
    }
}

/// One lookup on the engine (A and AAAA queries, or a PTR query), shared by every NSS client asking the
/// same question while it runs or shortly after.
final class NSSLookup {
    let key: NSSLookupKey
    /// The engine's continuous queries behind it.
    let operations: [OperationID]
    var host: NSSHostLookupProgress
    var reverse: NSSReverseLookupProgress
    /// Clients waiting for this lookup.
    var waiters: Set<Int> = []
    /// When the last client was answered or joined; the lookup ends `keepFinished` after it once nobody waits.
    var lastUsed: Int64

    init(key: NSSLookupKey, operations: [OperationID], at time: Int64) {
        self.key = key
        self.operations = operations
        host = NSSHostLookupProgress(startedAt: time)
        reverse = NSSReverseLookupProgress(startedAt: time)
        lastUsed = time
    }

    /// Takes in an engine event of one of its queries.
    func apply(_ event: OperationEvent, at time: Int64) {
        switch event {
        case .recordAdded(let record, let link), .recordRemoved(let record, let link):
            let added = { if case .recordAdded = event { return true } else { return false } }()
            guard record.name == key.name else { return }
            switch (key, record.data) {
            case (.host, .a(let address)):
                update(host: .v4(address), added: added, link: link, at: time)
            case (.host, .aaaa(let address)):
                update(host: .v6(address), added: added, link: link, at: time)
            case (.reverse, .ptr(let target)):
                if added {
                    reverse.add(
                        NSSFoundName(name: target, interfaceIndex: link.interfaceIndex, linkFamily: link.family))
                } else {
                    reverse.remove(target)
                }
            default:
                break
            }
        case .negativeAnswerAdded(let question, let link, _), .negativeAnswerRemoved(let question, let link):
            guard case .host = key, question.name == key.name else { return }
            let denied = { if case .negativeAnswerAdded = event { return true } else { return false } }()
            switch question.type {
            case .a: host.note(.ipv4, denied: denied, on: link)
            case .aaaa: host.note(.ipv6, denied: denied, on: link)
            default: break
            }
        default:
            break
        }
    }

    private func update(host address: IPAddress, added: Bool, link: LinkID, at time: Int64) {
        if added {
            host.add(
                NSSFoundAddress(address: address, interfaceIndex: link.interfaceIndex, linkFamily: link.family),
                at: time)
        } else {
            host.remove(address)
        }
    }
}
