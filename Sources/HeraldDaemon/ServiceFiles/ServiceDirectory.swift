import HeraldConfig
import HeraldEngine
import HeraldFiles
import HeraldWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `services.d` directory: every `*.service` (Avahi XML) and `*.dnssd` (systemd-resolved) file in it.
package enum ServiceDirectory {
    /// What a directory held.
    package struct Contents: Sendable {
        /// The services of every usable file, in file-name order.
        package var services: [StaticService]
        /// Every problem found, errors (the file was refused) and warnings (something was ignored), in
        /// file-name order.
        package var problems: [ServiceFileProblem]

        package init(services: [StaticService] = [], problems: [ServiceFileProblem] = []) {
            self.services = services
            self.problems = problems
        }

        /// The files refused, each with its problems.
        package var errors: [ServiceFileProblem] { problems.filter { $0.severity == .error } }

        package func registrations(autoRename: Bool = true) -> [ServiceRegistration] {
            StaticService.registrations(for: services, autoRename: autoRename)
        }
    }

    /// Reads every `*.service` and `*.dnssd` file of `path` (not recursively; hidden files are skipped).
    /// A broken file is reported and skipped; the others are still used. A missing or unreadable
    /// directory is itself reported as a problem. Problems name files by their full path.
    package static func load(path: String, hostName: String) -> Contents {
        load(path: path, hostName: hostName, specifiers: .system(hostName: hostName))
    }

    package static func load(path: String, hostName: String, specifiers: SystemdDNSSDFile.Specifiers) -> Contents {
        var contents = Contents()
        let names: [String]
        // No directory means no static services, as for Avahi without /etc/avahi/services.
        guard FileKind.exists(path) else { return contents }
        switch DirectoryEntries.names(in: path) {
        case .success(let found): names = found
        case .failure(let failure):
            contents.problems.append(ServiceFileProblem(file: path, message: "cannot read the directory: \(failure)"))
            return contents
        }
        for name in names.sorted()
        where !name.hasPrefix(".") && (name.hasSuffix(".service") || name.hasSuffix(".dnssd")) {
            let filePath = PathName.joined(path, name)
            guard let kind = try? FileKind.of(filePath).get(), kind != .directory else { continue }
            guard case .success(let bytes) = FileContents.read(filePath) else {
                contents.problems.append(
                    ServiceFileProblem(file: filePath, message: "cannot read the file (check its permissions)"))
                continue
            }
            do {
                if name.hasSuffix(".service") {
                    let parsed = try AvahiServiceFile(data: bytes, file: filePath, hostName: hostName)
                    contents.services += parsed.services
                    contents.problems += parsed.warnings
                } else {
                    guard let text = String(validating: bytes, as: UTF8.self) else {
                        contents.problems.append(
                            ServiceFileProblem(file: filePath, message: "the file is not UTF-8 text"))
                        continue
                    }
                    let dropIns = Self.dropIns(of: filePath, problems: &contents.problems)
                    let parsed = try SystemdDNSSDFile(
                        contents: text, file: filePath, dropIns: dropIns, specifiers: specifiers)
                    contents.services += parsed.services
                    contents.problems += parsed.warnings
                }
            } catch {
                contents.problems += error.problems
            }
        }
        return contents
    }

    /// The drop-ins of a `.dnssd` file: the `.conf` files of `FILE.d/` in name order (systemd.dnssd(5)).
    static func dropIns(of filePath: String, problems: inout [ServiceFileProblem]) -> [(file: String, contents: String)]
    {
        let directory = filePath + ".d"
        guard let names = try? DirectoryEntries.names(in: directory).get() else { return [] }
        var result: [(file: String, contents: String)] = []
        for name in names.sorted() where name.hasSuffix(".conf") && !name.hasPrefix(".") {
            let path = directory + "/" + name
            guard case .success(let bytes) = FileContents.read(path) else {
                problems.append(
                    ServiceFileProblem(
                        file: path, severity: .warning,
                        message: "cannot read the drop-in (check its permissions); ignored"))
                continue
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                problems.append(
                    ServiceFileProblem(
                        file: path, severity: .warning, message: "the drop-in is not UTF-8 text; ignored"))
                continue
            }
            result.append((path, text))
        }
        return result
    }
}
