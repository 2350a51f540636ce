import Foundation
import Testing

/// Herald's drop-in libdns_sd.so.1 as a program built for Debian's library sees it: the same symbols, the
/// same soname, and the pure helpers (no daemon needed).
@Suite("libdns_sd: ABI and TXT helpers")
struct LibDNSSDLibraryTests {
    @Test(
        "every function of Debian's dns_sd.h, plus DNSServiceGetAddrInfo and DNSServiceGetProperty, is exported, and nothing else; soname libdns_sd.so.1, only libc needed"
    )
    func exportsTheWholeAPI() throws {
        let header = try String(contentsOfFile: LibDNSSDPrograms.debianInclude + "/dns_sd.h", encoding: .utf8)
        let declared = LibDNSSDPrograms.declaredFunctions(inHeader: header)
        #expect(declared.count >= 25, "parsed only \(declared.sorted()) from the header")
        #expect(
            declared.contains("DNSServiceRegister") && declared.contains("TXTRecordGetItemAtIndex"),
            "\(declared.sorted())")

        let library = try LibDNSSDPrograms.libraryDirectory() + "/libdns_sd.so.1"
        let symbols = try Command.check(["nm", "-D", "--defined-only", library]).stdout
        let exported = Set(
            symbols.split(separator: "\n").compactMap { line -> String? in
                let fields = line.split(separator: " ")
                return fields.count == 3 && fields[1] == "T" ? String(fields[2]) : nil
            })
        let newer: Set<String> = ["DNSServiceGetAddrInfo", "DNSServiceGetProperty"]
        #expect(declared.subtracting(exported).isEmpty, "not exported: \(declared.subtracting(exported).sorted())")
        #expect(newer.isSubset(of: exported), "\(exported.sorted())")
        #expect(
            exported.subtracting(declared).subtracting(newer).isEmpty,
            "internals leak: \(exported.subtracting(declared).subtracting(newer).sorted())")

        let dynamic = try Command.check(["readelf", "-d", library]).stdout
        #expect(dynamic.contains("Library soname: [libdns_sd.so.1]"), "\(dynamic)")
        let needed = dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.count == 1 && needed[0].contains("[libc.so.6]"), "\(needed)")
    }

    @Test("the TXTRecord helpers and DNSServiceConstructFullName work in a program linked against Debian's library")
    func txtHelpers() throws {
        let program = try LibDNSSDPrograms.compile(
            "Tests/HeraldIntegrationTests/CPrograms/txt_helpers.c", named: "txt_helpers")
        let loaded = try LibDNSSDPrograms.loadedLibrary(of: program)
        #expect(loaded == (try LibDNSSDPrograms.libraryDirectory()) + "/libdns_sd.so.1", "ldd: \(loaded ?? "none")")
        // Without the loader path it is an ordinary program for Avahi's compatibility library.
        let linked = try LibDNSSDPrograms.loadedLibrary(of: program, withHerald: false)
        #expect(linked != nil && linked != loaded, "ldd without LD_LIBRARY_PATH: \(linked ?? "none")")
        let environment = try LibDNSSDPrograms.environment()
        let result = try Command.run(["env", "LD_LIBRARY_PATH=\(environment["LD_LIBRARY_PATH"]!)", program])
        #expect(result.succeeded && result.stdout.contains("checks, 0 failed"), "\(result)")
        // Avahi's compatibility library warns on stderr when it is loaded; Herald's does not.
        #expect(!result.stderr.contains("Apple Bonjour compatibility layer"), "\(result)")
    }

    @Test(
        "bad arguments and references fail with BadParam or BadReference, and with no daemon every call says ServiceNotRunning"
    )
    func misuseAndNoDaemon() throws {
        let program = try LibDNSSDPrograms.compile(
            "Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
        let library = try LibDNSSDPrograms.libraryDirectory()
        let missing = "/tmp/herald-libdnssd-\(getpid())/no-daemon.sock"
        let misuse = try Command.run([
            "env", "LD_LIBRARY_PATH=\(library)", "DNSSD_UDS_PATH=\(missing)", program, "misuse",
        ])
        #expect(misuse.succeeded, "\(misuse)")
        #expect(
            misuse.stdout == """
                browse-null-type return=-65540
                browse-null-callback return=-65540
                resolve-null-domain return=-65540
                register-noautorename-without-callback return=-65540
                share-null-connection return=-65541
                process-null return=-65540 sockfd-null=-1
                add-record-null return=-65541
                remove-record-null return=-65541
                deallocate-null survived
                connection return=-65563

                """, "\(misuse)")
        let property = try Command.run([
            "env", "LD_LIBRARY_PATH=\(library)", "DNSSD_UDS_PATH=\(missing)", program, "property",
        ])
        #expect(property.stdout.contains("DaemonVersion return=-65563"), "\(property)")
    }
}
