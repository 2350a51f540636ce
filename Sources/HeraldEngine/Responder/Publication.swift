import HeraldWire

/// A record this host answers for.
package struct AuthoritativeRecord: Hashable, Sendable {
    /// The record with its full TTL. `cacheFlush` is set exactly when the record is unique.
    package var record: ResourceRecord
    /// Unique records (SRV, TXT, addresses, reverse PTR) are probed and defended; shared ones (PTR of a
    /// service type) are not (RFC 6762 §2, §8).
    package var isUnique: Bool { record.cacheFlush }
    /// A unique record whose name no rename can change (a reverse-mapping PTR, named after an address): it is
    /// announced with the cache-flush bit and defended, but not probed, and another host's claim on it is no
    /// conflict, since taking another host name would not end it (as mDNSResponder's "known unique" records).
    package var isKnownUnique = false

    package init(_ record: ResourceRecord, unique: Bool) {
        var record = record
        record.cacheFlush = unique
        self.record = record
    }

    /// A unique record that is not probed (see ``isKnownUnique``).
    package static func knownUnique(_ record: ResourceRecord) -> AuthoritativeRecord {
        var authoritative = AuthoritativeRecord(record, unique: true)
        authoritative.isKnownUnique = true
        return authoritative
    }
}

/// Where a group of records stands on one link (RFC 6762 §8).
enum PublicationPhase: Hashable, Sendable {
    /// Waiting to send probe number `sent + 1` at `nextAt` (the last wait, after probe 3, ends in announcing).
    case probing(sent: Int, nextAt: Instant)
    /// Probed successfully, waiting for this host's own name to be established before announcing records that
    /// point at it (an SRV record whose target is still being probed would send peers to a name nobody owns).
    case probed
    /// Sending unsolicited announcement number `sent + 1` at `nextAt`.
    case announcing(sent: Int, nextAt: Instant)
    /// Announced; answering queries and defending.
    case established

    var nextAt: Instant? {
        switch self {
        case .probing(_, let at), .announcing(_, let at): return at
        case .probed, .established: return nil
        }
    }

    /// True until the records are announced: they are not answered for, and any record with their names conflicts.
    var isProbing: Bool {
        switch self {
        case .probing, .probed: return true
        case .announcing, .established: return false
        }
    }

    var isAnnounced: Bool { !isProbing }
}

/// What is being published: a DNS-SD service registration, the host's own address records, or one record a
/// client registered by itself (`DNSServiceRegisterRecord`).
enum PublicationKind: Hashable, Sendable {
    case service(ServiceRegistration)
    case host
    case record(RecordRegistration)
}

/// A record published beside a service's SRV and TXT, at the instance name (`DNSServiceAddRecord`): unique,
/// renamed with the service, withdrawn with it.
package struct ServiceExtraRecord: Hashable, Sendable {
    package var type: RecordType
    package var data: RecordData
    /// The TTL; nil for the default of records that do not name a host (4500 s).
    package var ttl: UInt32?

    package init(type: RecordType, data: RecordData, ttl: UInt32? = nil) {
        self.type = type
        self.data = data
        self.ttl = ttl
    }
}

/// One record a client publishes by itself (`DNSServiceRegisterRecord`): a unique record is probed and
/// defended and, on a conflict, fails (never renamed); a shared one is announced at once.
package struct RecordRegistration: Hashable, Sendable {
    package var name: DNSName
    package var type: RecordType
    package var data: RecordData
    package var ttl: UInt32
    package var unique: Bool
    /// Publish only on this interface (nil: every interface).
    package var interfaceIndex: Int?

    package init(
        name: DNSName, type: RecordType, data: RecordData, ttl: UInt32, unique: Bool, interfaceIndex: Int? = nil
    ) {
        self.name = name
        self.type = type
        self.data = data
        self.ttl = ttl
        self.unique = unique
        self.interfaceIndex = interfaceIndex
    }
}

/// A registration as a client asked for it (RFC 6763 §4–§7).
package struct ServiceRegistration: Hashable, Sendable {
    /// The instance label; empty means "use the host name" (DNSServiceRegister convention).
    package var instance: String
    /// The service type, e.g. `_http._tcp.local.`.
    package var type: DNSName
    /// Subtype labels, e.g. `_printer` (published as `_printer._sub._http._tcp.local.`).
    package var subtypes: [String]
    /// The host the service runs on; nil for this host (follows its name through renames).
    package var host: DNSName?
    package var port: UInt16
    package var txt: TXTRecord
    /// Rename on conflict (`Name (2)` …); otherwise fail with a name conflict.
    package var autoRename: Bool
    /// Publish only on this interface (nil: every interface).
    package var interfaceIndex: Int?
    /// Publish only on the links of this IP family (an Avahi service file's `protocol="ipv4"`); nil: both.
    package var family: IPFamily?
    /// The SRV record's priority and weight (RFC 2782); 0 unless a service file sets them.
    package var priority: UInt16 = 0
    package var weight: UInt16 = 0
    /// More TXT records published beside `txt` in the instance's TXT record set (a systemd `.dnssd` file
    /// with several `TxtText=`/`TxtData=` lines).
    package var additionalTXT: [TXTRecord] = []
    /// Records added to the registration by the client (`DNSServiceAddRecord`), published at the instance name.
    package var extraRecords: [ServiceExtraRecord] = []

    package init(
        instance: String, type: DNSName, subtypes: [String] = [], host: DNSName? = nil, port: UInt16,
        txt: TXTRecord = .empty, autoRename: Bool = true, interfaceIndex: Int? = nil
    ) {
        self.instance = instance
        self.type = type
        self.subtypes = subtypes
        self.host = host
        self.port = port
        self.txt = txt
        self.autoRename = autoRename
        self.interfaceIndex = interfaceIndex
    }
}

/// A set of records probed, announced and defended together: one registration, or the host's addresses.
struct Publication: Sendable {
    let id: OperationID
    var kind: PublicationKind
    /// The name currently claimed: the instance label for a service, the host label for the host.
    var label: String
    /// How many renames so far (the next candidate is `label (renames + 2)`).
    var renames = 0
    /// Per link: the phase, and the records published there.
    var phases: [LinkID: PublicationPhase] = [:]
    var records: [LinkID: [AuthoritativeRecord]] = [:]
    /// Links where a probe for the current name has gone out; conflicting answers count only after one has
    /// (RFC 6762 §8.1: earlier ones may be stale).
    var probeSent: Set<LinkID> = []
    /// True once `registered` was reported for the current name.
    var reported = false

    /// Unique records on a link, the ones this host defends.
    func uniqueRecords(on link: LinkID) -> [AuthoritativeRecord] {
        (records[link] ?? []).filter(\.isUnique)
    }

    /// Unique records on a link that probing covers, and that another host's claim puts in conflict.
    func probedRecords(on link: LinkID) -> [AuthoritativeRecord] {
        (records[link] ?? []).filter { $0.isUnique && !$0.isKnownUnique }
    }

    /// The names whose probed records this publication claims on a link.
    func claimedNames(on link: LinkID) -> [DNSName] {
        var names: [DNSName] = []
        for record in probedRecords(on: link) where !names.contains(record.record.name) {
            names.append(record.record.name)
        }
        return names
    }
}
