import HeraldConfig
import HeraldEngine
import HeraldSession
import HeraldWire
import Logging

/// Publishes the administrator's service files (services.d, and any other directory configured) through the
/// engine, and keeps them in step with the directories on every reload: new files are probed and announced, removed ones say goodbye, a changed TXT
/// record is announced again, any other change re-registers the service. Static services are the
/// administrator's own and are not subject to app permissions.
final class StaticServicePublisher {
    private let directories: [String]
    private let network: NetworkService
    private let logger: Logger
    /// What is published, by instance name and type.
    private var published: [String: (id: OperationID, registration: ServiceRegistration)] = [:]
    /// The IDs of the services' engine operations, tagged as static services'. Their events are of no use here
    /// (a conflict renames a service in the engine), so no receiver is registered for them.
    private var operationIDs = EngineOperationIDs(owner: .staticServices)

    init(directories: [String], network: NetworkService, logger: Logger) {
        self.directories = directories
        self.network = network
        self.logger = logger
    }

    /// The number of static services published.
    var count: Int { published.count }

    /// Reads the directories and brings what is published in line with them, `%h` (`%H`) in names standing for the
    /// host name in use now (after a rename too).
    func reload() {
        var contents = ServiceDirectory.Contents()
        for directory in directories {
            let found = ServiceDirectory.load(path: directory, hostName: network.engine.hostLabel)
            contents.services += found.services
            contents.problems += found.problems
        }
        for problem in contents.problems {
            if problem.severity == .error {
                logger.error("services: \(problem)")
            } else {
                logger.warning("services: \(problem)")
            }
        }
        var wanted: [String: ServiceRegistration] = [:]
        let largestTXT = network.engine.configuration.messageSizeLimit.largestServiceRecordData
        for registration in contents.registrations() {
            let most = largestTXT(registration.type)
            guard registration.txt.rdata.count <= most else {
                logger.error(
                    """
                    services: \(Self.key(registration)): its TXT record of \(registration.txt.rdata.count) bytes cannot go out \
                    in one mDNS message (at most \(most) bytes for this type); not published: shorten its TXT entries
                    """)
                continue
            }
            if wanted[Self.key(registration)] != nil {
                logger.warning(
                    "services: \(Self.key(registration)) is defined twice; the later file's definition is used")
            }
            wanted[Self.key(registration)] = registration
        }
        for (key, entry) in published.sorted(by: { $0.key < $1.key }) where wanted[key] == nil {
            logger.info("services: withdrawing \(key)")
            network.perform { engine, now in engine.cancel(entry.id, at: now) }
            published[key] = nil
        }
        for (key, registration) in wanted.sorted(by: { $0.key < $1.key }) {
            if let current = published[key] {
                guard current.registration != registration else { continue }
                var sameButTXT = current.registration
                sameButTXT.txt = registration.txt
                if sameButTXT == registration {
                    logger.info("services: announcing the new TXT record of \(key)")
                    network.perform { engine, now in engine.updateTXT(current.id, txt: registration.txt, at: now) }
                    published[key] = (current.id, registration)
                    continue
                }
                network.perform { engine, now in engine.cancel(current.id, at: now) }
            }
            let id = operationIDs.next()
            logger.info("services: publishing \(key) on port \(registration.port)")
            network.perform { engine, now in engine.register(id, registration, at: now) }
            published[key] = (id, registration)
        }
    }

    /// How logs name a service, and what tells services apart: one limited to a family (an Avahi file's `protocol`)
    /// is not the same service as the name's on the other family.
    private static func key(_ registration: ServiceRegistration) -> String {
        let family = registration.family.map { $0 == .ipv4 ? " (IPv4 only)" : " (IPv6 only)" } ?? ""
        return "\"\(registration.instance)\" \(registration.type)" + family
    }
}
