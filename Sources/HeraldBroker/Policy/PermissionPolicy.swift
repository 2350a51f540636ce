/// The decision rules (docs/permissions.md, "Deciding"), as a pure function of the request, the caller and a
/// snapshot of the registered apps. In order, the first rule that applies decides:
///
/// 1. the caller is an operator → allow;
/// 2. no registered manifest matches the caller → refuse (`unregistered`);
/// 3. the manifest has no usage description → refuse (`no-usage-description`);
/// 4. the service type is not declared and the app lacks the multicast entitlement → refuse
///    (`undeclared-type`); browsing all types, or querying or publishing arbitrary names, needs the entitlement
///    (`entitlement-required`); address lookups skip this rule;
/// 5. granted → allow; denied → park (`denied`); not determined → park (`not-determined`) and record a
///    pending request.
///
/// Names outside `.local` and the link-local reverse zones are refused for everyone (`not-local`). Address lookups may
/// be opened to every local user by configuration (`address-lookups-open`), checked after rule 1.
package struct PermissionPolicy: Hashable, Sendable {
    package var operatorRule: OperatorRule
    /// When true, address lookups are allowed for every local user (docs/permissions.md, "Address lookups").
    package var addressLookupsOpenToAllUsers: Bool

    package init(operatorRule: OperatorRule, addressLookupsOpenToAllUsers: Bool = false) {
        self.operatorRule = operatorRule
        self.addressLookupsOpenToAllUsers = addressLookupsOpenToAllUsers
    }

    /// What the rules need to know about one caller, worked out once for any number of its requests against one
    /// snapshot: whether it is an operator, and which app it is (nil for an operator, whom rule 1 decides).
    package struct JudgedCaller: Hashable, Sendable {
        package let caller: CallerIdentity
        package let isOperator: Bool
        package let match: AppMatch?
    }

    /// Works out `caller`'s standing against the apps in `snapshot`, for ``decide(_:for:snapshot:)``.
    package func judge(_ caller: CallerIdentity, snapshot: PermissionSnapshot) -> JudgedCaller {
        let isOperator = operatorRule.isOperator(caller)
        return JudgedCaller(
            caller: caller, isOperator: isOperator,
            match: isOperator ? nil : snapshot.registry.match(caller))
    }

    /// Decides `request` from `caller` against the apps in `snapshot`.
    package func decide(_ request: PermissionRequest, caller: CallerIdentity, snapshot: PermissionSnapshot)
        -> PermissionDecision
    {
        decide(request, for: judge(caller, snapshot: snapshot), snapshot: snapshot)
    }

    /// Decides `request` from a caller judged against the same `snapshot` (``judge(_:snapshot:)``): judging every
    /// operation again after a change of decisions works out each caller once, not once per operation.
    package func decide(_ request: PermissionRequest, for judged: JudgedCaller, snapshot: PermissionSnapshot)
        -> PermissionDecision
    {
        let caller = judged.caller
        let target = RequestTarget(request)
        func decision(
            _ outcome: PermissionDecision.Outcome, _ reason: PermissionReason, app: AppID? = nil,
            pending: PendingRequest? = nil, _ explanation: String
        ) -> PermissionDecision {
            PermissionDecision(
                outcome: outcome, reason: reason, request: request, target: target, app: app,
                pendingRequest: pending, explanation: explanation)
        }

        if target == .notLocal {
            return decision(
                .refuse, .notLocal,
                "the name is outside .local and the reverse zones; Herald serves multicast DNS names only")
        }
        // Rule 1.
        if judged.isOperator {
            return decision(
                .allow, .operatorCaller,
                "the caller is an operator (uid 0 or the \(operatorRule.groupName) group)")
        }
        let match = judged.match
        if case .address = target, addressLookupsOpenToAllUsers {
            return decision(
                .allow, .addressLookupsOpen, app: match?.manifest.id,
                "address lookups are open to every local user by configuration")
        }
        // Rule 2.
        guard let manifest = match?.manifest else {
            return decision(
                .refuse, .unregistered,
                "no registered app matches this process (\(caller)); an operator can register the app's "
                    + "manifest with: herald app add FILE")
        }
        let id = manifest.id
        // Rule 3.
        guard let usageDescription = manifest.usageDescription else {
            return decision(
                .refuse, .noUsageDescription, app: id,
                "\(id) has no NSLocalNetworkUsageDescription in its manifest; add a sentence saying why "
                    + "it uses the local network, then register the manifest again (herald app add FILE)")
        }
        // Rule 4.
        if !manifest.hasMulticastEntitlement {
            switch target {
            case .serviceType(let type) where !manifest.declares(type):
                return decision(
                    .refuse, .undeclaredType, app: id,
                    "\(id) does not declare \(type) in NSBonjourServices; add it to the manifest and "
                        + "register the manifest again (herald app add FILE)")
            case .allServiceTypes:
                let what =
                    request.operation == .register
                    ? "publishing in the service type enumeration (_dns-sd._udp)"
                    : "browsing all service types"
                return decision(
                    .refuse, .entitlementRequired, app: id,
                    "\(what) needs the \(Manifest.multicastEntitlement) entitlement in \(id)'s manifest")
            case .arbitraryName(let name, let type):
                let verb = request.operation == .register ? "publishing" : "querying"
                return decision(
                    .refuse, .entitlementRequired, app: id,
                    "\(verb) \(name) \(type), which is not a service of a declared type, needs the "
                        + "\(Manifest.multicastEntitlement) entitlement in \(id)'s manifest")
            case .serviceType, .address, .notLocal:
                break
            }
        }
        // Rule 5.
        switch snapshot.decision(for: id) {
        case .granted:
            return decision(.allow, .granted, app: id, "\(id) has been granted local network access")
        case .denied:
            return decision(
                .park, .denied, app: id,
                "\(id) has been denied local network access; an operator can run: herald grant \(id)")
        case .notDetermined:
            let pending = PendingRequest(
                appID: id, appName: manifest.name, usageDescription: usageDescription,
                operation: request.operation, serviceType: target.serviceTypeText,
                subject: target.subject)
            return decision(
                .park, .notDetermined, app: id, pending: pending,
                "\(id) has not been granted; an operator can run: herald grant \(id)")
        }
    }
}
