import HeraldConfig
import HeraldEngine
import HeraldWire

/// A static service as the responder publishes it. Apart from the parsers, so that they need nothing of the engine.
extension StaticService {
    /// The registration the responder publishes for this service: every TXT record in the instance's TXT
    /// record set, the SRV priority and weight the file gives (0 otherwise), on the links of the family its
    /// `protocol` names.
    package func registration(autoRename: Bool = true, interfaceIndex: Int? = nil) -> ServiceRegistration {
        var registration = ServiceRegistration(
            instance: name, type: type.baseTypeName, subtypes: subtypes, host: host,
            port: port, txt: txt, autoRename: autoRename, interfaceIndex: interfaceIndex)
        switch self.protocol {
        case .any: registration.family = nil
        case .ipv4: registration.family = .ipv4
        case .ipv6: registration.family = .ipv6
        }
        registration.priority = priority ?? 0
        registration.weight = weight ?? 0
        var seen: Set<TXTRecord> = [txt]
        registration.additionalTXT = txtRecords.dropFirst().filter { seen.insert($0).inserted }
        return registration
    }

    /// Registrations for a list of services, in order.
    package static func registrations(
        for services: [StaticService], autoRename: Bool = true,
        interfaceIndex: Int? = nil
    ) -> [ServiceRegistration] {
        services.map { $0.registration(autoRename: autoRename, interfaceIndex: interfaceIndex) }
    }
}
