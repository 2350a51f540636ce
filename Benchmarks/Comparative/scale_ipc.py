"""Browsing and resolving many instances through heraldd's app socket directly, as an app would, without
the `herald` command's process start: one connection per browse, one per resolve (at most WINDOW resolves
outstanding; a connection is closed as soon as its resolve has answered)."""

import select
import time

import dnssd_ipc

WINDOW = 256


def discover_all_ipc(socket_path, types, expected, timeout):
    start = time.monotonic()
    poller = select.epoll()
    connections = {}  # fd -> (socket, reader, kind, key)
    for t in range(types):
        sock = dnssd_ipc.connect(socket_path)
        sock.sendall(dnssd_ipc.browse_request(f"_bench{t}._tcp"))
        sock.setblocking(False)
        poller.register(sock.fileno(), select.EPOLLIN)
        connections[sock.fileno()] = [sock, dnssd_ipc.ReplyReader(expect_status=True), "browse", None]
    added, resolved = set(), set()
    queue = []
    early = 0  # resolve replies that came before their request's status
    outstanding = 0
    discovered_at = resolved_at = None
    deadline = start + timeout
    last_progress = time.monotonic()
    while time.monotonic() < deadline and (discovered_at is None or resolved_at is None):
        while queue and outstanding < WINDOW:
            interface_index, name, regtype, domain = queue.pop()
            sock = dnssd_ipc.connect(socket_path)
            sock.sendall(dnssd_ipc.resolve_request(interface_index, name, regtype, domain))
            sock.setblocking(False)
            poller.register(sock.fileno(), select.EPOLLIN)
            connections[sock.fileno()] = [sock, dnssd_ipc.ReplyReader(expect_status=True), "resolve", (regtype, name)]
            outstanding += 1
        events = poller.poll(0.2)
        now = time.monotonic()
        if not events and now - last_progress > 10:
            break
        for fd, _ in events:
            entry = connections.get(fd)
            if entry is None:
                continue
            sock, reader, kind, key = entry
            try:
                data = sock.recv(262144)
            except BlockingIOError:
                continue
            if not data:
                poller.unregister(fd)
                sock.close()
                del connections[fd]
                continue
            last_progress = now
            for op, body in reader.feed(data):
                if op == dnssd_ipc.OP_BROWSE_REPLY:
                    flags, interface_index, error, name, regtype, domain = dnssd_ipc.parse_browse_reply_full(body)
                    if error == 0 and flags & dnssd_ipc.FLAG_ADD and (regtype, name) not in added:
                        added.add((regtype, name))
                        queue.append((interface_index, name, regtype, domain))
                elif op == dnssd_ipc.OP_RESOLVE_REPLY and kind == "resolve":
                    error = dnssd_ipc.parse_resolve_reply(body)[0]
                    if error == 0 and key not in resolved:
                        resolved.add(key)
                        if reader.status is None:
                            early += 1
                        poller.unregister(fd)
                        sock.close()
                        del connections[fd]
                        outstanding -= 1
                        break
            if discovered_at is None and len(added) >= expected:
                discovered_at = now - start
            if resolved_at is None and len(resolved) >= expected:
                resolved_at = now - start
    for sock, *_ in list(connections.values()):
        sock.close()
    return {"discovered": len(added), "resolved": len(resolved), "discover_s": discovered_at,
            "resolve_s": resolved_at, "replies_before_status": early}
