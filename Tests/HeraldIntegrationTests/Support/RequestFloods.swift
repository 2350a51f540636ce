/// Python, after `DNSSDByHand.python`, that floods heraldd's app socket with requests the way a hostile local user
/// would: one connection per request (the first request of a connection gets its status in band), sent in bursts of
/// connections open at once, so that the daemon decides a burst in one turn of its loop.
enum RequestFloods {
    /// `SOCKET COUNT PREFIX BURST`: browses `_PREFIXn._tcp` for n in 0..<COUNT, BURST at a time; prints
    /// `statuses S1=N1 S2=N2 … in T s`.
    static let browses =
        DNSSDByHand.python + #"""
            import time
            count, prefix, burst = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
            statuses = {}
            sent = 0
            start = time.time()
            while sent < count:
                connections = [connect() for _ in range(min(burst, count - sent))]
                for index, s in enumerate(connections):
                    request(s, 6, b"ctx-fld0", browse_body("_%s%d._tcp" % (prefix, sent + index)))
                for s in connections:
                    status = status_of(s)
                    statuses[status] = statuses.get(status, 0) + 1
                    s.close()
                sent += len(connections)
            print("statuses " + " ".join("%d=%d" % item for item in sorted(statuses.items()))
                  + " in %.2f s" % (time.time() - start), flush=True)
            """#

    /// `SOCKET COUNT PREFIX`: looks up the addresses of `PREFIXn.local` for n in 0..<COUNT (DNSServiceGetAddrInfo),
    /// one connection each, closed once the status is in; prints `statuses S=N … in T s`.
    static let addressLookups =
        DNSSDByHand.python + #"""
            import time
            count, prefix = int(sys.argv[2]), sys.argv[3]
            statuses = {}
            start = time.time()
            for index in range(count):
                s = connect()
                request(s, 15, b"ctx-addr", struct.pack(">III", 0, 0, 1) + ("%s%d.local" % (prefix, index)).encode() + b"\0")
                status = status_of(s)
                statuses[status] = statuses.get(status, 0) + 1
                s.close()
            print("statuses " + " ".join("%d=%d" % item for item in sorted(statuses.items()))
                  + " in %.2f s" % (time.time() - start), flush=True)
            """#

    /// `SOCKET COUNT PREFIX`: queries the HINFO record of `PREFIXn.local` for n in 0..<COUNT (DNSServiceQueryRecord),
    /// one connection each, closed once the status is in; prints `statuses S=N … in T s`.
    static let queries =
        DNSSDByHand.python + #"""
            import time
            count, prefix = int(sys.argv[2]), sys.argv[3]
            statuses = {}
            start = time.time()
            for index in range(count):
                s = connect()
                name = ("%s%d.local" % (prefix, index)).encode() + b"\0"
                request(s, 8, b"ctx-qury", struct.pack(">II", 0, 0) + name + struct.pack(">HH", 13, 1))
                status = status_of(s)
                statuses[status] = statuses.get(status, 0) + 1
                s.close()
            print("statuses " + " ".join("%d=%d" % item for item in sorted(statuses.items()))
                  + " in %.2f s" % (time.time() - start), flush=True)
            """#

    /// `SOCKET NAME`: one address lookup of NAME (any bytes but NUL), kept until the status is in; prints `status S`.
    static let oneLookup =
        DNSSDByHand.python + #"""
            s = connect()
            request(s, 15, b"ctx-addr", struct.pack(">III", 0, 0, 1) + sys.argv[2].encode("utf-8", "surrogateescape") + b"\0")
            print("status %d" % status_of(s), flush=True)
            """#
}
