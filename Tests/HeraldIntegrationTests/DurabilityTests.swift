import Foundation
import Testing

/// The permission store under `kill -9` (docs/permissions.md, "The store"): a change that `herald` was told is done
/// survives the daemon being killed at any moment, and the database stays healthy.
@Suite("Permission store durability under kill -9")
struct DurabilityTests {
    /// 200 rounds of: start heraldd on the same store, check every change acknowledged before the last kill,
    /// make changes (grant, deny, reset, manifest updates) as fast as the control socket takes them, and
    /// `kill -9` the daemon at a random moment, often in the middle of a change.
    @Test("every acknowledged change survives 200 kill -9 restarts, and the store passes its integrity check")
    func killNineLoop() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let host = lan.hosts[0]
        let result = try host.run(
            ["python3", "-c", Self.driver, try HeraldBinaries.heraldd(), host.directory, "200"],
            timeout: 600)
        #expect(result.status == 0, "\(result)")
        let summary = result.stdout.split(separator: "\n").last { $0.hasPrefix("rounds") } ?? ""
        #expect(summary.hasPrefix("rounds 200 "), "\(result)")
        #expect(!result.stdout.contains("LOST") && !result.stdout.contains("INTEGRITY"), "\(result)")
        print("durability: \(summary)")
    }

    /// argv: HERALDD DIR ROUNDS. Prints one `rounds …` summary line; `LOST …` or `INTEGRITY …` lines on failure.
    static let driver = #"""
        import json, os, random, signal, socket, sqlite3, subprocess, sys, threading, time

        heraldd, directory, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
        state = os.path.join(directory, "durable-state")
        control = os.path.join(directory, "durable-control.sock")
        app_socket = os.path.join(directory, "durable-dnssd.sock")
        os.makedirs(os.path.join(directory, "durable-apps"), exist_ok=True)
        apps = ["org.example.durable%d" % n for n in range(4)]
        random.seed(6762)

        def manifest(app, version):
            return json.dumps({"id": app, "name": "Durable " + app[-1], "executables": ["/usr/bin/durable" + app[-1]],
                               "NSBonjourServices": ["_durable._tcp"],
                               "NSLocalNetworkUsageDescription": "Durable version %d." % version})

        def start():
            began = time.time()
            process = subprocess.Popen([heraldd, "--hostname", "durable", "--socket", app_socket, "--control-socket", control,
                                        "--state-dir", state, "--apps-dir", os.path.join(directory, "durable-apps"),
                                        "--services-dir", os.path.join(directory, "durable-services"), "--log-level", "error"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while True:
                if process.poll() is not None:
                    print("START FAILED", process.stderr.read().decode(), flush=True)
                    sys.exit(1)
                try:
                    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    connection.connect(control)
                    return process, connection, time.time() - began
                except OSError:
                    connection.close()
                    time.sleep(0.005)

        class Channel:
            def __init__(self, connection):
                self.connection, self.buffer, self.next = connection, b"", 1
            def call(self, **request):
                request.update(version=1, id=self.next)
                self.next += 1
                self.connection.sendall((json.dumps(request) + "\n").encode())
                while b"\n" not in self.buffer:
                    chunk = self.connection.recv(65536)
                    if not chunk:
                        raise ConnectionError("closed")
                    self.buffer += chunk
                line, self.buffer = self.buffer.split(b"\n", 1)
                return json.loads(line)

        # What each app may look like after a restart: the last acknowledged state, plus the state of a change
        # that was in flight when the daemon died (it may or may not have been committed).
        acceptable = {app: {("absent", None)} for app in apps}
        acknowledged = in_flight_lost = in_flight_kept = 0
        slowest_start = 0.0
        versions = {app: 0 for app in apps}

        for round_number in range(rounds):
            process, connection, started_in = start()
            slowest_start = max(slowest_start, started_in)
            channel = Channel(connection)
            for app in apps:
                reply = channel.call(command="app-show", app=app)
                if reply["ok"]:
                    seen = (reply["app"]["decision"], reply["app"]["usageDescription"])
                else:
                    seen = ("absent", None)
                if seen not in acceptable[app] and not (seen[0] == "absent" and ("absent", None) in acceptable[app]):
                    print("LOST round %d %s: found %s, expected one of %s" % (round_number, app, seen, acceptable[app]), flush=True)
                    sys.exit(1)
                acceptable[app] = {seen}
            # Kill at a random moment while changes are being made.
            threading.Timer(random.uniform(0.01, 0.12), lambda: process.send_signal(signal.SIGKILL)).start()
            try:
                while True:
                    app = random.choice(apps)
                    (decision, usage), = acceptable[app]
                    action = random.choice(["grant", "deny", "reset", "app-add"]) if decision != "absent" else "app-add"
                    if action == "app-add":
                        versions[app] += 1
                        new = (decision if decision != "absent" else "not-determined",
                               "Durable version %d." % versions[app])
                        request = dict(command="app-add", manifest=manifest(app, versions[app]), fileName="m.json")
                    else:
                        new = ({"grant": "granted", "deny": "denied", "reset": "not-determined"}[action], usage)
                        request = dict(command=action, app=app)
                    acceptable[app] = {(decision, usage), new}
                    reply = channel.call(**request)
                    if not reply["ok"]:
                        print("REFUSED", request, reply, flush=True)
                        sys.exit(1)
                    acceptable[app] = {new}
                    acknowledged += 1
            except (ConnectionError, OSError):
                pass
            process.wait()
            connection.close()
            database = sqlite3.connect(os.path.join(state, "permissions.sqlite"))
            check = database.execute("PRAGMA integrity_check").fetchall()
            database.close()
            if check != [("ok",)]:
                print("INTEGRITY round %d: %s" % (round_number, check), flush=True)
                sys.exit(1)

        print("rounds %d acknowledged-changes %d slowest-start %.3f s" % (rounds, acknowledged, slowest_start), flush=True)
        """#
}
