"""Which hosts a server may crawl: only those `api.ingest_urls` names, checked at every request.

The check runs on the address a name resolves to, at each request and each redirect: a public
name that resolves to a private, loopback or link-local address (DNS rebinding, an internal
service behind a redirect) is refused unless the setting names that host or address itself.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from fnmatch import fnmatch
from urllib.parse import urlsplit

import httpcore
import httpx

from docqa.errors import PermissionDeniedError

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressGuard:
    """Hosts a crawl may reach: names (`docs.example.org`, `*.example.org`) and addresses (`127.0.0.1`)."""

    def __init__(self, allowed: list[str]):
        self.allowed = [a.strip().lower().strip("[]") for a in allowed if a.strip()]

    def check_url(self, url: str) -> str:
        """The URL's host when the setting names it (before any lookup); PermissionDeniedError otherwise."""
        host = (urlsplit(url).hostname or "").lower()
        if not host or not any(fnmatch(host, pattern) for pattern in self.allowed):
            names = ", ".join(self.allowed) or "none"
            raise PermissionDeniedError(f"{url}: the server may not crawl {host or 'this URL'} "
                                        f"(api.ingest_urls lists the hosts it may crawl: {names})")
        return host

    async def check(self, url: str) -> None:
        """check_url, then every address the host resolves to (see `address`)."""
        await self.address(self.check_url(url), url)

    async def address(self, host: str, url: str = "") -> str:
        """The address to connect to for `host`: every address it resolves to must be allowed, a
        private, loopback, link-local or reserved one only when the setting names the host or that
        address exactly."""
        host = host.lower().strip("[]")
        if not any(fnmatch(host, pattern) for pattern in self.allowed):
            self.check_url(f"http://{host}/")
        found = await _addresses(host)
        for address in found:
            if _internal(address) and host not in self.allowed and str(address) not in self.allowed:
                raise PermissionDeniedError(f"{url or host}: {host} resolves to {address}, an internal address; "
                                            "name the host or address itself in api.ingest_urls to allow it")
        return str(found[0])

    def transport(self, limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
        """An httpx transport whose every connection goes to an address this guard allowed, looked up
        once at connect time (a DNS answer that changes between the check and the connection, DNS
        rebinding, is never connected to)."""
        return _GuardedTransport(self, limits)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting to the guard's checked address instead of the name."""

    def __init__(self, guard: AddressGuard):
        self.guard, self.inner = guard, httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options=None) -> httpcore.AsyncNetworkStream:
        address = await self.guard.address(host)
        return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                            socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options=None) -> httpcore.AsyncNetworkStream:
        raise PermissionDeniedError(f"{path}: a crawl never connects to a unix socket")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class _GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a connection pool whose network backend is the guard's (TLS still
    verifies the URL's host name: the pool connects to the address and speaks TLS for the name)."""

    def __init__(self, guard: AddressGuard, limits: httpx.Limits):
        super().__init__(limits=limits, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False), max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=_GuardedBackend(guard))


async def _addresses(host: str) -> list[IpAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise PermissionDeniedError(f"{host}: cannot resolve the name ({exc})") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def _internal(address: IpAddress) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    address = mapped or address
    return (address.is_private or address.is_loopback or address.is_link_local or address.is_reserved
            or address.is_multicast or address.is_unspecified)
