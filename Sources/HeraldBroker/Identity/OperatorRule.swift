#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who counts as an operator (docs/permissions.md, "Operators"; rule 1 of "Deciding"): uid 0 and members of a
/// configurable group, `herald` by default.
/// Operators are exempt from the app rules.
package struct OperatorRule: Hashable, Sendable {
    /// The operator group when the configuration names none.
    package static let defaultGroupName = "herald"

    /// The group's name, for messages.
    package var groupName: String
    /// The group's id; nil when the group does not exist (then only uid 0 is an operator).
    package var groupID: UInt32?

    package init(groupName: String = OperatorRule.defaultGroupName, groupID: UInt32?) {
        self.groupName = groupName
        self.groupID = groupID
    }

    /// The rule for `groupName`, looking its id up in the system's group database (getgrnam_r).
    package static func resolving(groupName: String = OperatorRule.defaultGroupName) -> OperatorRule {
        OperatorRule(groupName: groupName, groupID: lookUpGroupID(groupName))
    }

    /// True when the caller is uid 0 or has the operator group among its groups.
    package func isOperator(_ caller: CallerIdentity) -> Bool {
        isOperator(uid: caller.uid, groups: caller.groups)
    }

    /// True for uid 0 or a member of the operator group.
    package func isOperator(uid: UInt32, groups: [UInt32]) -> Bool {
        if uid == 0 { return true }
        guard let groupID else { return false }
        return groups.contains(groupID)
    }

    /// The id of a group by name, or nil when there is no such group.
    package static func lookUpGroupID(_ name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var size = 4096
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            let status = getgrnam_r(name, &group, &buffer, size, &result)
            if status == ERANGE {
                size *= 4
                continue
            }
            guard status == 0, result != nil else { return nil }
            return UInt32(group.gr_gid)
        }
        return nil
    }
}
