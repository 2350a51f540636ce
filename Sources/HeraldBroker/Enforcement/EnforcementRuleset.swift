/// Everything the kernel rules are made from (docs/enforcement.md, "The ruleset").
package struct EnforcementInput: Hashable, Sendable {
    package var mode: EnforcementMode
    package var apps: [EnforcedApp]
    package var networks: LocalNetworks
    /// Users whose sockets are never held back: root and the operator group's members.
    package var operatorUIDs: [UInt32]
    /// Cgroups that keep the local network in every mode: heraldd's own and the units the configuration exempts.
    package var exemptCgroups: [String]
    /// Where the cgroup v2 hierarchy is mounted below `/sys/fs/cgroup`, where nft looks up cgroup paths: empty on
    /// a unified system, `unified` on a hybrid one.
    package var cgroupMount: String

    package init(
        mode: EnforcementMode, apps: [EnforcedApp], networks: LocalNetworks, operatorUIDs: [UInt32] = [0],
        exemptCgroups: [String] = [], cgroupMount: String = ""
    ) {
        self.mode = mode
        self.apps = apps
        self.networks = networks
        self.operatorUIDs = operatorUIDs
        self.exemptCgroups = exemptCgroups
        self.cgroupMount = cgroupMount
    }

    /// The same input with no app granted: what fail-closed leaves in place while heraldd is stopped.
    package var closed: EnforcementInput {
        var input = self
        for index in input.apps.indices { input.apps[index].granted = false }
        return input
    }
}

/// The nftables ruleset that enforces an ``EnforcementInput``, as the text `nft -f` (and libnftables) reads: one
/// transaction that replaces the table Herald owns, `inet herald`, whole. Pure and deterministic, so that the same
/// store and interfaces always give the same text.
package enum EnforcementRuleset {
    /// The table Herald owns; nothing else of the system's ruleset is touched.
    package static let family = "inet"
    package static let table = "herald"

    /// The transaction that puts the rules of `input` in place of whatever the table held, or removes the table
    /// when the mode is off.
    package static func replacing(with input: EnforcementInput) -> String {
        guard input.mode != .off else { return removal }
        return removal + table(input)
    }

    /// The transaction that removes the table, whether it exists or not (adding an existing table is no error).
    package static let removal = "add table \(family) \(table)\ndelete table \(family) \(table)\n"

    /// The table's definition.
    package static func table(_ input: EnforcementInput) -> String {
        var text = ""
        text += set("lan4", type: "ipv4_addr", input.networks.unicast4)
        text += set("group4", type: "ipv4_addr", input.networks.group4)
        text += set("lan6", type: "ipv6_addr", input.networks.unicast6)
        text += set("group6", type: "ipv6_addr", input.networks.group6)
        text += chain(
            "output", hook: "output",
            [
                "oif \"lo\" accept",
                "ip daddr @group4 jump group_out",
                "ip6 daddr @group6 jump group_out",
                "ip daddr @lan4 jump lan_out",
                "ip6 daddr @lan6 jump lan_out",
            ])
        // A multicast or broadcast packet is delivered to every socket of its port, and nft finds only one of them:
        // judging it by that socket would take it from heraldd too (docs/enforcement.md, "What is not covered").
        text += chain(
            "input", hook: "input",
            [
                "iif \"lo\" accept",
                "meta pkttype { broadcast, multicast } accept",
                "ip saddr @lan4 jump lan_in",
                "ip6 saddr @lan6 jump lan_in",
            ])
        let uids = Array(Set(input.operatorUIDs)).sorted()
        let owners = uids.count == 1 ? "\(uids[0])" : "{ \(uids.map(String.init).joined(separator: ", ")) }"
        // Where everyone else is held back, the replies to operators' connections must come in, and the input hook
        // cannot tell a socket's owner: their connections are marked on the way out (docs/enforcement.md).
        let operators =
            input.mode == .all
            ? "meta skuid \(owners) ct mark set ct mark or \(operatorMark) accept" : "meta skuid \(owners) accept"
        let operatorReplies = input.mode == .all ? ["ct mark and \(operatorMark) == \(operatorMark) accept"] : []
        let exempt = Array(Set(input.exemptCgroups)).sorted().map { "\(match($0, input)) accept comment \"exempt\"" }
        let apps = input.apps.sorted { $0.id < $1.id }
        var granted: [String] = []
        var grantedGroups: [String] = []
        var held: [String] = []
        var heldIn: [String] = []
        var heldGroups: [String] = []
        // Each app held back anywhere has a chain of its own that its hold-back rules jump to: it counts the app's
        // packets in a counter, and keeps their destinations of the last minutes in two sets (see ``heldNames``).
        var objects = ""
        var heldChains = ""
        let names = Dictionary(uniqueKeysWithValues: heldNames(for: input).map { ($0.id, $0.name) })
        for app in apps {
            guard let name = names[app.id] else { continue }
            objects += "\tcounter \(name) {\n\t\tcomment \"\(app.id)\"\n\t}\n"
            for (suffix, type) in [("4", "ipv4_addr"), ("6", "ipv6_addr")] {
                objects +=
                    "\tset \(name)_\(suffix) {\n\t\ttype \(type)\n\t\tsize \(destinationsKept)\n"
                    + "\t\tflags dynamic,timeout\n\t\ttimeout \(destinationTimeout)\n\t}\n"
            }
            heldChains += chain(
                name,
                [
                    "counter name \"\(name)\"", "update @\(name)_4 { ip daddr }", "update @\(name)_6 { ip6 daddr }",
                    "jump block",
                ])
            for cgroup in Array(Set(app.cgroups)).sorted() {
                let match = match(cgroup, input)
                if !app.granted {
                    held.append("\(match) jump \(name) comment \"\(app.id) not granted\"")
                    // Coming in, the packet's destination is the app itself: counted, not kept.
                    heldIn.append(
                        "\(match) counter name \"\(name)\" jump block comment \"\(app.id) not granted\"")
                }
                heldGroups.append(
                    "\(match) jump \(name) comment \"\(app.id) \(app.granted ? "without multicast" : "not granted")\"")
            }
        }
        for app in apps {
            for cgroup in Array(Set(app.cgroups)).sorted() {
                let match = match(cgroup, input)
                if app.granted { granted.append("\(match) accept comment \"\(app.id) granted\"") }
                if app.granted && app.multicast {
                    grantedGroups.append("\(match) accept comment \"\(app.id) granted, multicast\"")
                }
            }
        }
        // Everyone else, in `all` mode: every packet of a program's socket. Packets the kernel sends or answers itself
        // (neighbour discovery, ICMP errors) have no program's socket and pass: on the way out a kernel socket has
        // no owner (`meta skuid` does not match), on the way in no socket is found.
        let everyoneElseOut = input.mode == .all ? ["meta skuid >= 0 jump block"] : []
        let everyoneElseIn = input.mode == .all ? ["socket transparent { 0, 1 } jump block"] : []
        text += chain(
            "lan_out",
            [operators, "meta l4proto { tcp, udp } th dport 53 accept"] + exempt + granted + held + everyoneElseOut)
        // Replies of the LAN's DNS servers, and mDNS unicast replies to heraldd's port (RFC 6762 §5.4, §6.7).
        text += chain(
            "lan_in",
            ["meta l4proto { tcp, udp } th sport 53 ct state established accept", "udp dport 5353 accept"]
                + operatorReplies + exempt
                + granted + heldIn + everyoneElseIn)
        text += chain("group_out", [operators] + exempt + grantedGroups + heldGroups + everyoneElseOut)
        // TCP gets a reset, so that connect() fails at once (ECONNREFUSED) and an established connection breaks on
        // its next segment; everything else is dropped, which a sender sees as EPERM.
        text += chain("block", ["meta l4proto tcp reject with tcp reset", "drop"])
        text += heldChains
        text += "}\n"
        return "table \(family) \(table) {\n" + objects + text
    }

    /// The names of the per-app objects of each app held back anywhere (not granted, or granted without the
    /// multicast entitlement), in order of app id: `heldN` for its chain and counter, `heldN_4` and `heldN_6` for
    /// the sets of its destinations (an app id is no nft identifier, so they are numbered). heraldd reads the
    /// counters with `list counters`, which, unlike listing the rules, does not look every cgroup up again.
    package static func heldNames(for input: EnforcementInput) -> [(id: String, name: String)] {
        input.apps.sorted { $0.id < $1.id }.filter { !$0.cgroups.isEmpty && !($0.granted && $0.multicast) }
            .enumerated().map { ($0.element.id, "held\($0.offset)") }
    }

    /// How many destinations of its held-back packets are kept per app and address family, and for how long.
    package static let destinationsKept = 64
    package static let destinationTimeout = "10m"

    /// The connection-tracking mark bit of operators' connections in `all` mode.
    package static let operatorMark = "0x20000000"

    /// `socket cgroupv2 level N "PATH"`: the socket's cgroup is `cgroup` or lies below it.
    static func match(_ cgroup: String, _ input: EnforcementInput) -> String {
        let components = cgroup.split(separator: "/")
        let path = ([input.cgroupMount].filter { !$0.isEmpty } + components.map(String.init)).joined(separator: "/")
        return "socket cgroupv2 level \(components.count) \"\(path)\""
    }

    /// True when nft can name `cgroup` in a quoted string: a relative path of printable ASCII without quotes,
    /// backslashes or empty components.
    package static func isNameable(cgroup: String) -> Bool {
        !cgroup.isEmpty && !cgroup.hasPrefix("/") && !cgroup.hasSuffix("/") && !cgroup.contains("//")
            && cgroup.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    private static func set(_ name: String, type: String, _ elements: [IPPrefix]) -> String {
        "\tset \(name) {\n\t\ttype \(type)\n\t\tflags interval\n\t\telements = { "
            + elements.map(\.description).joined(separator: ", ") + " }\n\t}\n"
    }

    private static func chain(_ name: String, hook: String? = nil, _ rules: [String]) -> String {
        var text = "\tchain \(name) {\n"
        if let hook { text += "\t\ttype filter hook \(hook) priority filter; policy accept;\n" }
        for rule in rules { text += "\t\t\(rule)\n" }
        return text + "\t}\n"
    }
}
