"""Advertises COUNT instances spread over TYPES service types with python-zeroconf (IPv4 only).

argv: IPV4 HOSTNAME COUNT TYPES NAME_PREFIX [TYPE_PREFIX]. Prints READY when every instance is registered
(up to 50: probed and announced; more: only answered when asked for), then serves until SIGTERM."""
import asyncio, signal, socket, sys
from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

ipv4, hostname, count, types, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
type_prefix = sys.argv[6] if len(sys.argv) > 6 else "_bench"


async def main():
    azc = AsyncZeroconf(interfaces=[ipv4], ip_version=IPVersion.V4Only)
    infos = []
    for i in range(count):
        service_type = f"{type_prefix}{i % types}._tcp.local."
        infos.append(AsyncServiceInfo(
            service_type, f"{prefix} {i}.{service_type}", addresses=[socket.inet_aton(ipv4)],
            port=1000 + i % 60000, properties={"n": str(i)}, server=f"{hostname}.local."))
    if count <= 50:
        # Registered properly: probed, then announced.
        tasks = [await azc.async_register_service(info) for info in infos]
        await asyncio.gather(*tasks)
    else:
        # Many instances: straight into the registry, so they are answered when asked for but neither
        # probed nor announced (probing thousands of names from several peers at once takes minutes).
        for info in infos:
            azc.zeroconf.registry.async_add(info)
    print("READY", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await azc.async_unregister_all_services()
    await azc.async_close()

asyncio.run(main())
