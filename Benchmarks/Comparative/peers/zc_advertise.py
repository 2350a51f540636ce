"""Advertises COUNT instances spread over TYPES service types with python-zeroconf (IPv4 only).

argv: IPV4 HOSTNAME COUNT TYPES NAME_PREFIX [TYPE_PREFIX]. Prints READY when every instance is registered
(probed and announced), then serves until SIGTERM (goodbyes on exit)."""
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
    # Registered in batches so the announcements do not all go out in one burst.
    batch = 100
    for start in range(0, len(infos), batch):
        tasks = [await azc.async_register_service(info) for info in infos[start:start + batch]]
        await asyncio.gather(*tasks)
    print("READY", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await azc.async_unregister_all_services()
    await azc.async_close()

asyncio.run(main())
