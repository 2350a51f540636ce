import HeraldEngine
import HeraldIPC
import HeraldWire

/// The objects that are dnssd record queries: address resolvers (a PTR query of the reverse name), record
/// browsers (any name, class and type) and domain browsers (the PTR records of `b._dns-sd._udp.local` and its
/// kin, RFC 6763 §11).
extension AvahiFrontEnd {
    /// Avahi's `AvahiDomainBrowserType`: which of RFC 6763's domain enumeration names a domain browser asks.
    static let domainEnumerationLabels = ["b", "db", "r", "dr", "lb"]

    func makeAddressResolver(_ arguments: inout DBusArguments, client: Client) throws(AvahiError) -> AvahiObject {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let text = try arguments.string()
        _ = try Self.lookupFlags(try arguments.uint32())
        let index = try dnssdInterface(interface)
        let reverse: DNSName
        let family: AvahiProtocol
        if let address = IPv4Address(text) {
            reverse = address.reverseName
            family = .inet
        } else if let address = IPv6Address(text) {
            reverse = address.reverseName
            family = .inet6
        } else {
            throw .invalidAddress
        }
        let resolver = try makeObject(
            .addressResolver, "AddressResolver", client: client, interface: interface, protocol: proto)
        resolver.name = text
        resolver.addressProtocol = family
        resolver.request = .query(
            QueryRecordRequest(interfaceIndex: index, name: reverse.description, rrtype: RecordType.ptr.rawValue))
        return resolver
    }

    func makeRecordBrowser(_ arguments: inout DBusArguments, client: Client) throws(AvahiError) -> AvahiObject {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let name = try arguments.string()
        let recordClass = try arguments.uint16()
        let type = try arguments.uint16()
        _ = try Self.lookupFlags(try arguments.uint32())
        let index = try dnssdInterface(interface)
        guard (try? DNSName(name)) != nil else { throw .invalidDomainName }
        let browser = try makeObject(
            .recordBrowser, "RecordBrowser", client: client, interface: interface, protocol: proto)
        browser.request = .query(
            QueryRecordRequest(interfaceIndex: index, name: name, rrtype: type, rrclass: recordClass))
        return browser
    }

    func makeDomainBrowser(_ arguments: inout DBusArguments, client: Client) throws(AvahiError) -> AvahiObject {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let domain = try arguments.string()
        let kind = try arguments.int32()
        _ = try Self.lookupFlags(try arguments.uint32())
        try Self.checkDomain(domain)
        let index = try dnssdInterface(interface)
        guard kind >= 0, Int(kind) < Self.domainEnumerationLabels.count else { throw .invalidArgument }
        let browser = try makeObject(
            .domainBrowser, "DomainBrowser", client: client, interface: interface, protocol: proto)
        let name = Self.domainEnumerationLabels[Int(kind)] + "._dns-sd._udp.local."
        browser.request = .query(
            QueryRecordRequest(interfaceIndex: index, name: name, rrtype: RecordType.ptr.rawValue))
        return browser
    }

    /// A reply of a record query: a record browser's item, a domain browser's domain, an address resolver's name.
    func recordReply(_ reply: QueryRecordReply, object: AvahiObject, initial: Bool, family: IPFamily?) {
        let wasParked = object.parked
        guard !refused(reply.error, object: object, initial: initial) else { return }
        if wasParked && object.kind != .addressResolver {
            schedule(.allForNow, for: object, after: Self.allForNowDelay)
        }
        let interface = Int32(truncatingIfNeeded: reply.interfaceIndex)
        let flags = AvahiLookupResultFlags.multicast.rawValue
        let added = reply.flags.contains(.add)
        switch object.kind {
        case .recordBrowser:
            signal(
                object, added ? "ItemNew" : "ItemRemove",
                [
                    .int32(interface), .int32(reportedProtocol(object, family)),
                    .string(AvahiNames.undotted(reply.fullname)), .uint16(reply.rrclass), .uint16(reply.rrtype),
                    .bytes(reply.rdata), .uint32(flags),
                ])
        case .domainBrowser:
            guard case .ptr(let domain) = try? RecordData.decode(type: .ptr, uncompressed: reply.rdata) else { return }
            signal(
                object, added ? "ItemNew" : "ItemRemove",
                [
                    .int32(interface), .int32(reportedProtocol(object, family)),
                    .string(AvahiNames.undotted(domain.description)), .uint32(flags),
                ])
        case .addressResolver:
            guard added, case .ptr(let name) = try? RecordData.decode(type: .ptr, uncompressed: reply.rdata) else {
                return
            }
            object.found = true
            answer(
                object,
                with: [
                    .int32(interface), .int32(reportedProtocol(object, family)),
                    .int32(object.addressProtocol.rawValue),
                    .string(object.name), .string(AvahiNames.undotted(name.description)), .uint32(flags),
                ])
        default:
            break
        }
    }
}
