import Foundation
import Testing

extension HeraldOnTestLANs {
    /// Stopping and starting heraldd as a service manager would.
    @Suite("heraldd stopping and restarting", .serialized)
    struct DaemonLifecycleTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "SIGTERM withdraws every advertised service with goodbyes and removes the sockets, and a restarted daemon advertises again"
        )
        func goodbyesOnTerminateAndCleanRestart() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, observer) = (lan.hosts[0], lan.hosts[1])
            try observer.startAvahi()
            let type = "_hlife._tcp"

            let daemon = try server.startHeraldd()
            let register = try daemon.spawnHerald(["register", "Short Lived", type, "7100", "--json"])
            _ = try observer.waitForAvahiBrowse(type, resolve: false, timeout: 15) { entries in
                entries.contains { $0.name == "Short Lived" }
            }

            let stoppedAt = Date()
            let status = daemon.stop()
            #expect(status == 0, "heraldd exited with \(String(describing: status)) on SIGTERM:\n\(daemon.log)")
            #expect(daemon.log.contains("sending goodbyes"), "\(daemon.log)")
            // The socket files heraldd made go with it.
            for path in [daemon.socket, daemon.controlSocket] {
                #expect(!FileManager.default.fileExists(atPath: path), "\(path) is left behind")
            }
            // The goodbye (TTL 0) makes Avahi drop the service one second later, long before its TTL would.
            _ = try observer.waitForAvahiBrowse(type, resolve: false, timeout: 5) { entries in
                !entries.contains { $0.name == "Short Lived" }
            }
            let gone = Date().timeIntervalSince(stoppedAt)
            #expect(gone < 4, "the service took \(gone) s to disappear after SIGTERM")
            register.send(SIGINT)
            register.waitForExit(timeout: 5)

            // Started again with the same host name, it takes it back without a rename and serves new registrations.
            let again = try server.startHeraldd(hostName: daemon.hostName)
            let registerAgain = try again.spawnHerald(["register", "Born Again", type, "7101", "--json"])
            let entries = try observer.waitForAvahiBrowse(type, resolve: false, timeout: 15) { entries in
                entries.contains { $0.name == "Born Again" }
            }
            #expect(!entries.contains { $0.name == "Short Lived" }, "\(entries)")
            #expect(
                !again.log.contains("is taken by another host"), "the restarted daemon renamed its host:\n\(again.log)")
            registerAgain.send(SIGINT)
            registerAgain.waitForExit(timeout: 5)
        }

        @Test(
            "a second heraldd on the state directory of a running one refuses to start and names it; after a kill -9 it starts"
        )
        func oneDaemonPerStateDirectory() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let first = try host.startHeraldd(hostName: "first")
            // Its own sockets, the first one's permission store.
            let second = try host.spawn([
                try HeraldBinaries.heraldd(), "--hostname", "second",
                "--socket", host.directory + "/second.sock",
                "--control-socket", host.directory + "/second-control.sock",
                "--state-dir", first.stateDirectory,
            ])
            #expect(second.waitForExit(timeout: 10) == 71, "\(second.output)")
            #expect(
                second.stderr.contains(
                    "another heraldd (pid \(first.process.pid)) is using the state directory "
                        + first.stateDirectory), "\(second.stderr)")
            #expect(!FileManager.default.fileExists(atPath: host.directory + "/second.sock"))
            #expect(first.process.isRunning, "\(first.log)")
            // The kernel releases the lock with the process, however it ends.
            first.process.send(SIGKILL)
            _ = first.process.waitForExit(timeout: 5)
            let third = try host.startHeraldd(hostName: "third", arguments: ["--state-dir", first.stateDirectory])
            #expect(third.process.isRunning, "\(third.log)")
        }
    }
}
