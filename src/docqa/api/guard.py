"""Refuse oversized and mistyped request bodies before any route reads them, (on a loopback bind)
requests addressed to a name other than the server's own, and writes a page of another origin sent.

A body larger than its limit is refused with 413 as soon as the limit is passed: at once when
Content-Length says so, else while it streams in (the route then sees the client as gone and its
own answer is dropped).  A body that is not JSON where JSON is expected, or not multipart where a
file upload is expected, is refused with 415.
"""

from __future__ import annotations

import json

from urllib.parse import urlsplit

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docqa.api.errors import body

JSON_LIMIT = 1024 * 1024  # questions, queries and paths; nothing legitimate comes near it
_MULTIPART_SLACK = 64 * 1024  # part headers and boundaries around the files
_BODY_METHODS = {"POST", "PUT", "PATCH"}
_WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


class RequestGuard:
    """`uploads`: the paths that take multipart file uploads, with their limit in bytes."""

    def __init__(self, app: ASGIApp, uploads: dict[str, int]):
        self.app, self.uploads = app, uploads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        upload = scope["path"] in self.uploads
        limit = self.uploads[scope["path"]] + _MULTIPART_SLACK if upload else JSON_LIMIT
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return await _refuse(send, 413, "too_large", _too_large(limit, upload), scope["path"])
        has_body = (length is not None and int(length) > 0) or "chunked" in headers.get("transfer-encoding", "")
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if has_body and upload and kind != "multipart/form-data":
            return await _refuse(send, 415, "unsupported_media_type",
                                 "upload files as multipart/form-data (field 'files', and 'collection' if wanted)", scope["path"])
        if has_body and not upload and kind != "application/json" and not kind.endswith("+json"):
            return await _refuse(send, 415, "unsupported_media_type", "send the request body as application/json",
                                 scope["path"])
        await self._limited(scope, receive, send, limit, upload)

    async def _limited(self, scope: Scope, receive: Receive, send: Send, limit: int, upload: bool) -> None:
        received, refused, started = 0, False, False

        async def counted() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:
                        await _refuse(send, 413, "too_large", _too_large(limit, upload), scope["path"])
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out already; the route's own answer is dropped
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted, guarded)


class HostGuard(TrustedHostMiddleware):
    """On a loopback bind, answer only requests addressed to a loopback name, the bind address or `allowed`:
    a web page whose name an attacker rebinds to 127.0.0.1 must not reach the API as the local user.

    Starlette's TrustedHostMiddleware parses the Host header and matches it ('*' accepts any name,
    '*.example.org' its subdomains); only its refusal is ours: 421 in the API's one error shape, as the
    MCP SDK answers the same check on /mcp, where Starlette would answer a plain-text 400.
    """

    LOOPBACK = ("127.0.0.1", "localhost", "[::1]")  # Starlette keeps an IPv6 literal's brackets

    def __init__(self, app: ASGIApp, allowed: list[str], bind: str = "127.0.0.1"):
        names = dict.fromkeys(_host_name(h) for h in (*self.LOOPBACK, bind, *allowed) if h.strip())
        super().__init__(self._admit, allowed_hosts=list(names), www_redirect=False)
        self.inner = app
        self.refusal = ("this server answers requests addressed to "
                        f"{', '.join(sorted(names))} only (add a proxy's name to api.allowed_hosts)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.inner(scope, receive, send)
        await super().__call__(scope, receive, _Refusal(send, self.refusal))

    async def _admit(self, scope: Scope, receive: Receive, send: Send) -> None:
        # an admitted request answers through the original `send`: only a refusal reaches _Refusal
        await self.inner(scope, receive, send.send if isinstance(send, _Refusal) else send)


class OriginGuard:
    """Refuse (403 `cross_origin`) a state-changing request that a page of another origin made the browser send
    (CSRF): without keys on loopback, or with the sign-in cookie, the browser's request would act as the user.

        Origin is one of api.cors_origins                           → admitted (the admin trusts that page)
        Sec-Fetch-Site: cross-site or same-site (another port)      → refused
        Origin given: its host[:port] is the Host the request names,
                      or a name in api.allowed_hosts                → admitted, else refused ("null" too)
        no Origin, no Sec-Fetch-Site, but the sign-in cookie        → refused (browsers send Origin on writes)
        no Origin, no cookie (curl, SDKs with a Bearer key)         → admitted

    Checking Origin rather than issuing CSRF tokens keeps every client stateless: browsers have sent
    Origin on every cross-origin POST for years, and a page cannot forge it.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: list[str], allowed_origins: list[str], cookie: str):
        self.app, self.cookie = app, cookie
        self.origins = {o.strip().rstrip("/").lower() for o in allowed_origins}
        self.hosts = [h.strip().lower() for h in allowed_hosts if h.strip() and h.strip() != "*"]  # '*' is no origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in _WRITE_METHODS:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            reason = self.refusal(headers)
            if reason:
                return await _refuse(send, 403, "cross_origin", reason, scope["path"])
        await self.app(scope, receive, send)

    def refusal(self, headers: dict[str, str]) -> str | None:
        """Why a write with these headers is refused, or None."""
        origin, site = headers.get("origin"), (headers.get("sec-fetch-site") or "").lower()
        if origin is not None and origin.strip().rstrip("/").lower() in self.origins:
            return None
        refused = (f"this request came from a page of another origin ({origin or site}): docqa accepts changes only "
                   "from its own page (behind a proxy, add the proxy's name to api.allowed_hosts; to let another "
                   "site's page call the API, list its origin in api.cors_origins)")
        if site in ("cross-site", "same-site"):
            return refused
        if origin is not None:
            return None if self._own(origin, headers.get("host", "")) else refused
        if not site and f"{self.cookie}=" in headers.get("cookie", ""):
            return ("a change sent with the sign-in cookie must carry an Origin header (every current browser "
                    "sends one); scripts can send their key as 'Authorization: Bearer dq_…' instead")
        return None

    def _own(self, origin: str, host: str) -> bool:
        try:
            parts = urlsplit(origin.strip())
            name = (parts.hostname or "").lower()
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not name:
            return False
        if parts.netloc.lower() == host.strip().lower():
            return True
        return any(name == h or (h.startswith("*.") and name.endswith(h[1:])) for h in self.hosts)


class _Refusal:
    """The `send` TrustedHostMiddleware refuses through: its plain-text 400 becomes our JSON 421."""

    def __init__(self, send: Send, message: str):
        self.send, self.message = send, message

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            await _refuse(self.send, 421, "bad_host", self.message)
        # its body ("Invalid host header") is dropped: _refuse sent ours


def _host_name(host: str) -> str:
    """A name as Starlette compares it: lower case, an IPv6 literal in brackets."""
    host = host.strip().lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _too_large(limit: int, upload: bool) -> str:
    if upload:
        return f"the upload is larger than api.max_upload_mb ({(limit - _MULTIPART_SLACK) / 1024 / 1024:g} MB)"
    return f"the request body is larger than {limit // 1024} KB"


async def _refuse(send: Send, status: int, code: str, message: str, path: str = "") -> None:
    data = json.dumps(body(code, message, status, path)).encode()  # under /v1/: OpenAI's shape
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})


ISOLATION = ((b"cross-origin-resource-policy", b"same-origin"), (b"cross-origin-opener-policy", b"same-origin"))


class IsolationHeaders:
    """Every response says it is for docqa's own origin only: Cross-Origin-Resource-Policy keeps a page
    of another origin — even another port of the same host, which the SameSite sign-in cookie treats as
    the same site — from embedding a page image, an original or any answer as an <img>, <script> or
    <object>; Cross-Origin-Opener-Policy keeps a window it opened from reaching back into ours."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def isolated(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in ISOLATION if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, isolated)
