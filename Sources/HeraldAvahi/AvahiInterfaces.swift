/// Avahi 0.8's D-Bus interfaces as Herald serves them: each method's and signal's arguments, with names and types
/// as Avahi's introspection files give them. The table drives both `Introspect` and the check of each call's
/// signature.
package struct AvahiInterfaceSpec: Sendable {
    package struct Argument: Sendable {
        package var name: String
        package var type: String
    }
    package struct Member: Sendable {
        package var name: String
        package var inputs: [Argument]
        package var outputs: [Argument]
        /// The signature a call must have.
        package var inputSignature: String { inputs.map(\.type).joined() }
    }

    package var name: String
    package var methods: [Member]
    package var signals: [Member]

    package func method(_ name: String) -> Member? { methods.first { $0.name == name } }
}

extension AvahiInterfaceSpec {
    package static let serverName = "org.freedesktop.Avahi.Server"
    package static let server2Name = "org.freedesktop.Avahi.Server2"
    package static let entryGroupName = "org.freedesktop.Avahi.EntryGroup"
    package static let serviceBrowserName = "org.freedesktop.Avahi.ServiceBrowser"
    package static let serviceTypeBrowserName = "org.freedesktop.Avahi.ServiceTypeBrowser"
    package static let serviceResolverName = "org.freedesktop.Avahi.ServiceResolver"
    package static let hostNameResolverName = "org.freedesktop.Avahi.HostNameResolver"
    package static let addressResolverName = "org.freedesktop.Avahi.AddressResolver"
    package static let recordBrowserName = "org.freedesktop.Avahi.RecordBrowser"
    package static let domainBrowserName = "org.freedesktop.Avahi.DomainBrowser"
    package static let introspectableName = "org.freedesktop.DBus.Introspectable"

    /// `a:i b:s` → arguments.
    private static func args(_ text: String) -> [Argument] {
        text.split(separator: " ").map { part in
            let pieces = part.split(separator: ":", maxSplits: 1).map(String.init)
            return Argument(name: pieces[0], type: pieces[1])
        }
    }

    private static func member(_ name: String, _ inputs: String = "", _ outputs: String = "") -> Member {
        Member(name: name, inputs: args(inputs), outputs: args(outputs))
    }

    private static let lookupIn = "interface:i protocol:i"

    /// The methods `Server` and `Server2` share.
    private static let serverCommon: [Member] = [
        member("GetVersionString", "", "version:s"),
        member("GetAPIVersion", "", "version:u"),
        member("GetHostName", "", "name:s"),
        member("SetHostName", "name:s"),
        member("GetHostNameFqdn", "", "name:s"),
        member("GetDomainName", "", "name:s"),
        member("IsNSSSupportAvailable", "", "yes:b"),
        member("GetState", "", "state:i"),
        member("GetLocalServiceCookie", "", "cookie:u"),
        member("GetAlternativeHostName", "name:s", "name:s"),
        member("GetAlternativeServiceName", "name:s", "name:s"),
        member("GetNetworkInterfaceNameByIndex", "index:i", "name:s"),
        member("GetNetworkInterfaceIndexByName", "name:s", "index:i"),
        member(
            "ResolveHostName", "\(lookupIn) name:s aprotocol:i flags:u",
            "\(lookupIn) name:s aprotocol:i address:s flags:u"),
        member(
            "ResolveAddress", "\(lookupIn) address:s flags:u",
            "\(lookupIn) aprotocol:i address:s name:s flags:u"),
        member(
            "ResolveService", "\(lookupIn) name:s type:s domain:s aprotocol:i flags:u",
            "\(lookupIn) name:s type:s domain:s host:s aprotocol:i address:s port:q txt:aay flags:u"),
        member("EntryGroupNew", "", "path:o"),
    ]

    private static let stateChanged = member("StateChanged", "state:i error:s")

    /// The object-creating methods, as `…New` (Server) or `…Prepare` (Server2).
    private static func creators(_ suffix: String) -> [Member] {
        [
            member("DomainBrowser" + suffix, "\(lookupIn) domain:s btype:i flags:u", "path:o"),
            member("ServiceTypeBrowser" + suffix, "\(lookupIn) domain:s flags:u", "path:o"),
            member("ServiceBrowser" + suffix, "\(lookupIn) type:s domain:s flags:u", "path:o"),
            member("ServiceResolver" + suffix, "\(lookupIn) name:s type:s domain:s aprotocol:i flags:u", "path:o"),
            member("HostNameResolver" + suffix, "\(lookupIn) name:s aprotocol:i flags:u", "path:o"),
            member("AddressResolver" + suffix, "\(lookupIn) address:s flags:u", "path:o"),
            member("RecordBrowser" + suffix, "\(lookupIn) name:s clazz:q type:q flags:u", "path:o"),
        ]
    }

    package static let server = AvahiInterfaceSpec(
        name: serverName, methods: serverCommon + creators("New"), signals: [stateChanged])
    package static let server2 = AvahiInterfaceSpec(
        name: server2Name, methods: serverCommon + creators("Prepare"), signals: [stateChanged])

    private static let publishIn = "interface:i protocol:i flags:u name:s"

    package static let entryGroup = AvahiInterfaceSpec(
        name: entryGroupName,
        methods: [
            member("Free"), member("Commit"), member("Reset"),
            member("GetState", "", "state:i"),
            member("IsEmpty", "", "empty:b"),
            member("AddService", "\(publishIn) type:s domain:s host:s port:q txt:aay"),
            member("AddServiceSubtype", "\(publishIn) type:s domain:s subtype:s"),
            member("UpdateServiceTxt", "\(publishIn) type:s domain:s txt:aay"),
            member("AddAddress", "\(publishIn) address:s"),
            member("AddRecord", "\(publishIn) clazz:q type:q ttl:u rdata:ay"),
        ],
        signals: [stateChanged])

    private static let browserSignals = [
        member("Failure", "error:s"), member("AllForNow"), member("CacheExhausted"),
    ]

    package static let serviceBrowser = AvahiInterfaceSpec(
        name: serviceBrowserName, methods: [member("Free"), member("Start")],
        signals: [
            member("ItemNew", "\(lookupIn) name:s type:s domain:s flags:u"),
            member("ItemRemove", "\(lookupIn) name:s type:s domain:s flags:u"),
        ] + browserSignals)

    package static let serviceTypeBrowser = AvahiInterfaceSpec(
        name: serviceTypeBrowserName, methods: [member("Free"), member("Start")],
        signals: [
            member("ItemNew", "\(lookupIn) type:s domain:s flags:u"),
            member("ItemRemove", "\(lookupIn) type:s domain:s flags:u"),
        ] + browserSignals)

    package static let serviceResolver = AvahiInterfaceSpec(
        name: serviceResolverName, methods: [member("Free"), member("Start")],
        signals: [
            member(
                "Found",
                "\(lookupIn) name:s type:s domain:s host:s aprotocol:i address:s port:q txt:aay flags:u"),
            member("Failure", "error:s"),
        ])

    package static let hostNameResolver = AvahiInterfaceSpec(
        name: hostNameResolverName, methods: [member("Free"), member("Start")],
        signals: [
            member("Found", "\(lookupIn) name:s aprotocol:i address:s flags:u"),
            member("Failure", "error:s"),
        ])

    package static let addressResolver = AvahiInterfaceSpec(
        name: addressResolverName, methods: [member("Free"), member("Start")],
        signals: [
            member("Found", "\(lookupIn) aprotocol:i address:s name:s flags:u"),
            member("Failure", "error:s"),
        ])

    package static let recordBrowser = AvahiInterfaceSpec(
        name: recordBrowserName, methods: [member("Free"), member("Start")],
        signals: [
            member("ItemNew", "\(lookupIn) name:s clazz:q type:q rdata:ay flags:u"),
            member("ItemRemove", "\(lookupIn) name:s clazz:q type:q rdata:ay flags:u"),
        ] + browserSignals)

    package static let domainBrowser = AvahiInterfaceSpec(
        name: domainBrowserName, methods: [member("Free"), member("Start")],
        signals: [
            member("ItemNew", "\(lookupIn) domain:s flags:u"),
            member("ItemRemove", "\(lookupIn) domain:s flags:u"),
        ] + browserSignals)

    /// The introspection document of an object serving `interfaces` (and `Introspectable`).
    package static func introspection(of interfaces: [AvahiInterfaceSpec], children: [String] = []) -> String {
        var xml =
            "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
            + " \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
            + " <interface name=\"\(introspectableName)\">\n"
            + "  <method name=\"Introspect\">\n   <arg name=\"data\" type=\"s\" direction=\"out\"/>\n  </method>\n"
            + " </interface>\n"
        for interface in interfaces {
            xml += " <interface name=\"\(interface.name)\">\n"
            for method in interface.methods {
                if method.inputs.isEmpty && method.outputs.isEmpty {
                    xml += "  <method name=\"\(method.name)\"/>\n"
                    continue
                }
                xml += "  <method name=\"\(method.name)\">\n"
                for arg in method.inputs {
                    xml += "   <arg name=\"\(arg.name)\" type=\"\(arg.type)\" direction=\"in\"/>\n"
                }
                for arg in method.outputs {
                    xml += "   <arg name=\"\(arg.name)\" type=\"\(arg.type)\" direction=\"out\"/>\n"
                }
                xml += "  </method>\n"
            }
            for signal in interface.signals {
                if signal.inputs.isEmpty {
                    xml += "  <signal name=\"\(signal.name)\"/>\n"
                    continue
                }
                xml += "  <signal name=\"\(signal.name)\">\n"
                for arg in signal.inputs { xml += "   <arg name=\"\(arg.name)\" type=\"\(arg.type)\"/>\n" }
                xml += "  </signal>\n"
            }
            xml += " </interface>\n"
        }
        for child in children { xml += " <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
