import Foundation
import Testing

extension HeraldOnTestLANs {
    /// heraldd under a service manager: readiness and watchdog notifications, reload and stop, and an app socket
    /// handed over by socket activation.
    @Suite("heraldd under systemd's protocols", .serialized)
    struct ServiceManagerTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "heraldd reports READY, WATCHDOG, RELOADING and STOPPING, and serves on the app and control sockets systemd passed to it"
        )
        func notifyAndSocketActivation() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let result = try host.run(
                ["python3", "-c", Self.serviceManager, try HeraldBinaries.heraldd(), host.directory],
                timeout: 60)
            #expect(result.status == 0, "\(result)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            // READY=1 comes once the sockets are bound, and only then does the activated socket answer.
            #expect(lines.first { $0.hasPrefix("notify:") }?.contains("READY=1") == true, "\(result.stdout)")
            #expect(lines.contains("browse status: 0"), "\(result.stdout)")
            // A second socket named "dnssd" (a unit listening on mDNSResponder's path too) is served as well, and
            // not bound again although heraldd's own setting names it.
            #expect(lines.contains("mDNSResponder path browse status: 0"), "\(result.stdout)")
            #expect(!result.stderr.contains("not serving the app protocol"), "\(result.stderr)")
            #expect(
                lines.contains("control status: True managed.local."),
                "both sockets came from the manager: \(result.stdout)")
            #expect(lines.contains("unused socket bound: False"), "\(result.stdout)")
            // The log names the socket it serves on: the one passed, not the one its setting names.
            #expect(
                result.stderr.contains(
                    "app socket \(host.directory)/activated.sock and \(host.directory)/activated-mdnsresponder.sock,"),
                "\(result.stderr)")
            #expect(lines.contains { $0.hasPrefix("notify:") && $0.contains("WATCHDOG=1") }, "\(result.stdout)")
            let reload = lines.firstIndex { $0.hasPrefix("notify:") && $0.contains("RELOADING=1") }
            let readyAgain = lines.lastIndex { $0.hasPrefix("notify:") && $0.contains("READY=1") }
            #expect(reload != nil && readyAgain != nil && readyAgain! > reload!, "\(result.stdout)")
            #expect(lines.contains { $0.hasPrefix("notify:") && $0.contains("STOPPING=1") }, "\(result.stdout)")
            #expect(lines.contains("exit: 0"), "\(result.stdout)")
            // The files of passed sockets belong to the manager, which keeps them for the next start, even the
            // one heraldd was also told to use (as its unit files do).
            #expect(lines.contains("activated sockets kept: True True True"), "\(result.stdout)")
        }

        @Test("an idle heraldd that only pings the watchdog does not give back its pages again and again")
        func watchdogPingsAreNotWork() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let result = try lan.hosts[0].run(
                [
                    "python3", "-c", Self.idleUnderWatchdog, try HeraldBinaries.heraldd(),
                    lan.hosts[0].directory,
                ], timeout: 120)
            #expect(result.status == 0, "\(result)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let pings = lines.first { $0.hasPrefix("pings ") }.flatMap { Int($0.dropFirst(6)) } ?? 0
            #expect(pings >= 15, "\(result.stdout)")
            // Start-up gives its pages back at once and a quiet period later; after that, pings every 4 s until the
            // SIGTERM at 72 s, past IdlePages' 60 s interval, must not bring another release. (The SIGTERM is work
            // and may bring one.)
            let releases = lines.filter { $0.hasPrefix("released at ") }.compactMap { Double($0.dropFirst(12)) }
            #expect(!releases.isEmpty, "the debug log shows no release at all: \(result.stdout)")
            let whileIdle = releases.filter { $0 >= 15 && $0 < 71.5 }
            #expect(whileIdle.isEmpty, "released while only the watchdog woke it: \(releases)")
        }

        /// argv: HERALDD DIR. Runs heraldd for 72 s with a watchdog of 8 s and nothing else to do; prints the number
        /// of pings and, for each page release in its debug log, the seconds since it started.
        static let idleUnderWatchdog = #"""
            import os, socket, subprocess, sys, threading, time
            heraldd, directory = sys.argv[1], sys.argv[2]
            notify_path = os.path.join(directory, "idle-notify.sock")
            if os.path.exists(notify_path): os.unlink(notify_path)
            notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            notify.bind(notify_path)
            notify.settimeout(0.5)
            started = time.monotonic()
            process = subprocess.Popen(
                [heraldd, "--hostname", "idlewatch", "--socket", os.path.join(directory, "idle.sock"),
                 "--control-socket", os.path.join(directory, "idle-control.sock"),
                 "--state-dir", os.path.join(directory, "idle-state"), "--log-level", "debug"],
                env=dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="8000000"),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            releases = []
            def read_log():
                for line in process.stderr:
                    if "pages released" in line:
                        releases.append(time.monotonic() - started)
            reader = threading.Thread(target=read_log)
            reader.start()
            pings = 0
            while time.monotonic() - started < 72:
                try:
                    if b"WATCHDOG=1" in notify.recv(4096): pings += 1
                except socket.timeout:
                    pass
            process.terminate()
            process.wait(timeout=10)
            reader.join()
            print("pings", pings)
            for when in releases: print("released at %.1f" % when)
            """#

        /// argv: HERALDD DIR. Plays the service manager: binds a notification socket, starts heraldd through
        /// systemd-socket-activate (which passes listening app and control sockets, named "dnssd" and "control",
        /// and a second app socket, as on mDNSResponder's path; heraldd's own settings name another app socket, the
        /// passed control socket and the passed second app socket, spelled with a doubled slash), asks for a 1 s
        /// watchdog,
        /// talks to the passed socket, then sends SIGHUP and SIGTERM; prints what it saw, and whether the passed
        /// sockets' files are still there.
        static let serviceManager = #"""
            import json, os, signal, socket, struct, subprocess, sys, time
            heraldd, directory = sys.argv[1], sys.argv[2]
            notify_path = os.path.join(directory, "notify.sock")
            app_path = os.path.join(directory, "activated.sock")
            control_path = os.path.join(directory, "activated-control.sock")
            compat_path = os.path.join(directory, "activated-mdnsresponder.sock")
            for path in (notify_path, app_path, control_path, compat_path):
                if os.path.exists(path): os.unlink(path)
            notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            notify.bind(notify_path)
            notify.settimeout(0.2)
            # systemd-socket-activate passes only the variables named with -E on to the service.
            process = subprocess.Popen(
                ["systemd-socket-activate", "-l", app_path, "-l", control_path, "-l", compat_path,
                 "--fdname=dnssd:control:dnssd",
                 "-E", "NOTIFY_SOCKET=" + notify_path, "-E", "WATCHDOG_USEC=1000000",
                 heraldd, "--hostname", "managed", "--socket", os.path.join(directory, "unused.sock"),
                 "--control-socket", control_path, "--mdnsresponder-socket", directory + "//activated-mdnsresponder.sock",
                 "--state-dir", os.path.join(directory, "state")],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

            def collect(seconds):
                end = time.time() + seconds
                while time.time() < end:
                    try:
                        data = notify.recv(4096)
                        print("notify:", data.decode().replace("\n", " "), flush=True)
                    except socket.timeout:
                        pass

            collect(1.0)
            for label, path in (("browse", app_path), ("mDNSResponder path browse", compat_path)):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                s.settimeout(3)
                body = struct.pack(">II", 0, 0) + b"_http._tcp\0" + b"\0"
                s.sendall(struct.pack(">IIII8sI", 1, len(body), 0, 6, b"ctx-sysd", 0) + body)
                print(label + " status:", struct.unpack(">i", s.recv(4))[0], flush=True)
                s.close()
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(control_path)
            c.settimeout(3)
            c.sendall(b'{"version": 1, "id": 1, "command": "status"}\n')
            reply = json.loads(c.makefile().readline())
            print("control status:", reply["ok"], reply["status"]["hostName"], flush=True)
            c.close()
            print("unused socket bound:", os.path.exists(os.path.join(directory, "unused.sock")), flush=True)
            collect(1.5)
            process.send_signal(signal.SIGHUP)
            collect(0.8)
            process.send_signal(signal.SIGTERM)
            collect(0.8)
            try:
                print("exit:", process.wait(timeout=5), flush=True)
            except subprocess.TimeoutExpired:
                process.kill()
                print("exit: timeout", flush=True)
            print("activated sockets kept:", os.path.exists(app_path), os.path.exists(control_path), os.path.exists(compat_path),
                  flush=True)
            sys.stderr.write(process.stderr.read().decode())
            """#
    }
}
