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
        """check_url, then every address the host resolves to: a private, loopback, link-local or
        reserved one only when the setting names the host or that address exactly."""
        host = self.check_url(url)
        for address in await _addresses(host):
            if _internal(address) and host not in self.allowed and str(address) not in self.allowed:
                raise PermissionDeniedError(f"{url}: {host} resolves to {address}, an internal address; "
                                            "name the host or address itself in api.ingest_urls to allow it")


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
