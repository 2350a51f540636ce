import Foundation
import HeraldBroker
import HeraldWire
import Testing

@Suite("The kernel rules built from apps, decisions and interfaces")
struct EnforcementRulesetTests {
    /// A LAN host with 10.213.47.10/24, fd48:6572:616c::10/64 and its link-local address.
    static let networks = LocalNetworks(addresses: [
        (.v4(IPv4Address(10, 213, 47, 10)), 24),
        (.v6(IPv6Address("fd48:6572:616c::10")!), 64),
        (.v6(IPv6Address("fe80::1")!), 64),
        (.v4(IPv4Address(127, 0, 0, 1)), 8),
    ])

    static let apps = [
        EnforcedApp(
            id: "org.example.tictactoe", granted: false, multicast: false, cgroups: ["system.slice/tictactoe.service"]),
        EnforcedApp(
            id: "org.example.printer", granted: true, multicast: false,
            cgroups: ["user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope"]),
        EnforcedApp(id: "org.example.cast", granted: true, multicast: true, cgroups: ["system.slice/cast.service"]),
    ]

    @Test("The local networks: each subnet and link-local block; multicast and every broadcast address apart")
    func localNetworks() {
        let networks = Self.networks
        #expect(networks.unicast4.map(\.description) == ["10.213.47.0/24", "169.254.0.0/16"])
        #expect(networks.group4.map(\.description) == ["10.213.47.255", "224.0.0.0/4", "255.255.255.255"])
        #expect(networks.unicast6.map(\.description) == ["fd48:6572:616c::/64", "fe80::/10"])
        #expect(networks.group6.map(\.description) == ["ff00::/8"])
    }

    @Test("A block inside another is folded into it, whatever the order of the addresses")
    func folding() {
        let one = LocalNetworks(addresses: [(.v4(IPv4Address(10, 0, 1, 5)), 24), (.v4(IPv4Address(10, 0, 0, 1)), 16)])
        let other = LocalNetworks(addresses: [
            (.v4(IPv4Address(10, 0, 0, 1)), 16), (.v4(IPv4Address(10, 0, 1, 5)), 24),
        ])
        #expect(one == other)
        #expect(one.unicast4.map(\.description) == ["10.0.0.0/16", "169.254.0.0/16"])
    }

    @Test("Registered: granted apps pass, apps not granted are held back, multicast needs the entitlement")
    func registeredRuleset() {
        let input = EnforcementInput(
            mode: .registered, apps: Self.apps, networks: Self.networks, operatorUIDs: [1001, 0, 0],
            exemptCgroups: ["system.slice/heraldd.service"])
        let expected = """
            add table inet herald
            delete table inet herald
            table inet herald {
            \tcounter held0 {
            \t\tcomment "org.example.printer"
            \t}
            \tset held0_4 {
            \t\ttype ipv4_addr
            \t\tsize 64
            \t\tflags dynamic,timeout
            \t\ttimeout 10m
            \t}
            \tset held0_6 {
            \t\ttype ipv6_addr
            \t\tsize 64
            \t\tflags dynamic,timeout
            \t\ttimeout 10m
            \t}
            \tcounter held1 {
            \t\tcomment "org.example.tictactoe"
            \t}
            \tset held1_4 {
            \t\ttype ipv4_addr
            \t\tsize 64
            \t\tflags dynamic,timeout
            \t\ttimeout 10m
            \t}
            \tset held1_6 {
            \t\ttype ipv6_addr
            \t\tsize 64
            \t\tflags dynamic,timeout
            \t\ttimeout 10m
            \t}
            \tset lan4 {
            \t\ttype ipv4_addr
            \t\tflags interval
            \t\telements = { 10.213.47.0/24, 169.254.0.0/16 }
            \t}
            \tset group4 {
            \t\ttype ipv4_addr
            \t\tflags interval
            \t\telements = { 10.213.47.255, 224.0.0.0/4, 255.255.255.255 }
            \t}
            \tset lan6 {
            \t\ttype ipv6_addr
            \t\tflags interval
            \t\telements = { fd48:6572:616c::/64, fe80::/10 }
            \t}
            \tset group6 {
            \t\ttype ipv6_addr
            \t\tflags interval
            \t\telements = { ff00::/8 }
            \t}
            \tchain output {
            \t\ttype filter hook output priority filter; policy accept;
            \t\toif "lo" accept
            \t\tip daddr @group4 jump group_out
            \t\tip6 daddr @group6 jump group_out
            \t\tip daddr @lan4 jump lan_out
            \t\tip6 daddr @lan6 jump lan_out
            \t}
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t\tiif "lo" accept
            \t\tmeta pkttype { broadcast, multicast } accept
            \t\tip saddr @lan4 jump lan_in
            \t\tip6 saddr @lan6 jump lan_in
            \t}
            \tchain lan_out {
            \t\tmeta skuid { 0, 1001 } accept
            \t\tmeta l4proto { tcp, udp } th dport 53 accept
            \t\tsocket cgroupv2 level 2 "system.slice/heraldd.service" accept comment "exempt"
            \t\tsocket cgroupv2 level 2 "system.slice/cast.service" accept comment "org.example.cast granted"
            \t\tsocket cgroupv2 level 5 "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope" accept comment "org.example.printer granted"
            \t\tsocket cgroupv2 level 2 "system.slice/tictactoe.service" jump held1 comment "org.example.tictactoe not granted"
            \t}
            \tchain lan_in {
            \t\tmeta l4proto { tcp, udp } th sport 53 ct state established accept
            \t\tudp dport 5353 accept
            \t\tsocket cgroupv2 level 2 "system.slice/heraldd.service" accept comment "exempt"
            \t\tsocket cgroupv2 level 2 "system.slice/cast.service" accept comment "org.example.cast granted"
            \t\tsocket cgroupv2 level 5 "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope" accept comment "org.example.printer granted"
            \t\tsocket cgroupv2 level 2 "system.slice/tictactoe.service" counter name "held1" jump block comment "org.example.tictactoe not granted"
            \t}
            \tchain group_out {
            \t\tmeta skuid { 0, 1001 } accept
            \t\tsocket cgroupv2 level 2 "system.slice/heraldd.service" accept comment "exempt"
            \t\tsocket cgroupv2 level 2 "system.slice/cast.service" accept comment "org.example.cast granted, multicast"
            \t\tsocket cgroupv2 level 5 "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope" jump held0 comment "org.example.printer without multicast"
            \t\tsocket cgroupv2 level 2 "system.slice/tictactoe.service" jump held1 comment "org.example.tictactoe not granted"
            \t}
            \tchain block {
            \t\tmeta l4proto tcp reject with tcp reset
            \t\tdrop
            \t}
            \tchain held0 {
            \t\tcounter name "held0"
            \t\tupdate @held0_4 { ip daddr }
            \t\tupdate @held0_6 { ip6 daddr }
            \t\tjump block
            \t}
            \tchain held1 {
            \t\tcounter name "held1"
            \t\tupdate @held1_4 { ip daddr }
            \t\tupdate @held1_6 { ip6 daddr }
            \t\tjump block
            \t}
            }

            """
        #expect(EnforcementRuleset.replacing(with: input) == expected)
    }

    @Test("All: everyone else is held back after operators, exemptions and granted apps")
    func allRuleset() {
        let input = EnforcementInput(
            mode: .all, apps: Self.apps, networks: Self.networks, exemptCgroups: ["system.slice/ssh.service"])
        let text = EnforcementRuleset.replacing(with: input)
        for chain in ["lan_out", "lan_in", "group_out"] {
            let body = Self.chain(chain, in: text)
            // Only packets of a program's socket: the kernel's own (neighbour discovery, ICMP errors) pass.
            let everyoneElse =
                chain == "lan_in" ? "socket transparent { 0, 1 } jump block" : "meta skuid >= 0 jump block"
            #expect(body.last == everyoneElse, "\(chain) ends by holding back everyone else")
            #expect(body.contains("socket cgroupv2 level 2 \"system.slice/ssh.service\" accept comment \"exempt\""))
        }
        // Operators' connections are marked on the way out, so that their replies come in.
        #expect(Self.chain("lan_out", in: text).first == "meta skuid 0 ct mark set ct mark or 0x20000000 accept")
        #expect(Self.chain("group_out", in: text).first == "meta skuid 0 ct mark set ct mark or 0x20000000 accept")
        #expect(Self.chain("lan_in", in: text).contains("ct mark and 0x20000000 == 0x20000000 accept"))
    }

    @Test("Registered leaves everyone else alone")
    func registeredLeavesOthers() {
        let input = EnforcementInput(mode: .registered, apps: Self.apps, networks: Self.networks)
        let text = EnforcementRuleset.replacing(with: input)
        for chain in ["lan_out", "lan_in", "group_out"] {
            #expect(!Self.chain(chain, in: text).contains { !$0.contains("cgroupv2") && $0.hasSuffix("jump block") })
        }
    }

    @Test("Off removes the table and adds nothing")
    func off() {
        let input = EnforcementInput(mode: .off, apps: Self.apps, networks: Self.networks)
        #expect(EnforcementRuleset.replacing(with: input) == "add table inet herald\ndelete table inet herald\n")
    }

    @Test("The same apps, cgroups and addresses in any order give the same text")
    func deterministic() {
        let one = EnforcementInput(mode: .registered, apps: Self.apps, networks: Self.networks, operatorUIDs: [0, 5])
        var reordered = Self.apps.reversed().map { app in
            var app = app
            app.cgroups.reverse()
            return app
        }
        reordered[0].cgroups += reordered[0].cgroups
        let other = EnforcementInput(mode: .registered, apps: reordered, networks: Self.networks, operatorUIDs: [5, 0])
        #expect(EnforcementRuleset.replacing(with: one) == EnforcementRuleset.replacing(with: other))
    }

    @Test("Fail-closed keeps every app's cgroups held back, granted ones too")
    func closed() {
        let input = EnforcementInput(mode: .registered, apps: Self.apps, networks: Self.networks).closed
        let text = EnforcementRuleset.replacing(with: input)
        #expect(!text.contains("accept comment \"org.example"))
        #expect(Self.chain("lan_out", in: text).filter { $0.hasSuffix("not granted\"") }.count == 3)
    }

    @Test("On a hybrid system the paths name the cgroup v2 mount below /sys/fs/cgroup, at the same level")
    func hybrid() {
        let input = EnforcementInput(
            mode: .registered, apps: [Self.apps[0]], networks: Self.networks, cgroupMount: "unified")
        #expect(
            EnforcementRuleset.replacing(with: input).contains(
                "socket cgroupv2 level 2 \"unified/system.slice/tictactoe.service\" jump held0"))
    }

    @Test(
        "Only cgroup paths nft can quote are named",
        arguments: [
            ("system.slice/tictactoe.service", true), ("user.slice/user-1000.slice/app-x@1.scope", true),
            ("", false), ("/system.slice", false), ("a//b", false), ("a/b\"c", false), ("app\\x2dx.scope", false),
            ("a b", false),
        ])
    func nameable(path: String, nameable: Bool) {
        #expect(EnforcementRuleset.isNameable(cgroup: path) == nameable)
    }

    /// The rules of chain `name` in `text`, without their indentation.
    static func chain(_ name: String, in text: String) -> [String] {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let start = lines.firstIndex(of: "chain \(name) {") else { return [] }
        return Array(lines[(start + 1)...].prefix { $0 != "}" })
    }
}

@Suite("The packets the kernel rules held back, per app")
struct BlockedCountsTests {
    @Test("Each app's counter is read by the id in its comment; a counter without one does not count")
    func parse() {
        let listing = """
            table inet herald {
            \tcounter held0 {
            \t\tcomment "org.example.printer"
            \t\tpackets 0 bytes 0
            \t}
            \tcounter held1 {
            \t\tcomment "org.example.tictactoe"
            \t\tpackets 7 bytes 420
            \t}
            \tcounter other {
            \t\tpackets 9 bytes 900
            \t}
            }
            """
        #expect(BlockedCounts.parse(listing: listing) == ["org.example.tictactoe": 7, "org.example.printer": 0])
        #expect(BlockedCounts.parse(listing: "") == [:])
    }
}

@Suite("The destination of an app's latest held-back packet")
struct HeldDestinationsTests {
    @Test("The element that expires last is the latest; an empty set has none")
    func latest() {
        let listing = """
            table inet herald {
            \tset held0_4 {
            \t\ttype ipv4_addr
            \t\tsize 64
            \t\tflags dynamic,timeout
            \t\ttimeout 10m
            \t\telements = { 10.213.47.11 expires 9m58s1ms, 239.255.255.250 expires 9m59s992ms,
            \t\t\t     10.213.47.255 expires 3m2s }
            \t}
            }
            """
        let latest = HeldDestinations.latest(inListing: listing)
        #expect(latest?.address == "239.255.255.250")
        #expect(latest?.expiresIn == 599_992)
        #expect(HeldDestinations.latest(inListing: "set held0_6 {\n\ttype ipv6_addr\n}\n") == nil)
    }
}
