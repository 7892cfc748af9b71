"""Authenticating HTTP requests (the REST API and MCP over HTTP) with API keys.

    bound to loopback, no active key        → every request is the local user (admin, every collection)
    any active key, or a non-loopback bind  → every request needs a key, `Authorization: Bearer dq_…`
                                              or `X-API-Key: dq_…`, or the sign-in cookie the web page
                                              gets from POST /api/v1/login; none, unknown or revoked is 401
    what a key may do (role, collections)   → decided by the core (the kb's services, docqa.access); refused is 403

Once a key exists, keys are required on loopback too: behind a reverse proxy every request comes
from 127.0.0.1, so a loopback bind does not prove the caller is local.  A server bound to any
other address without keys refuses to start (`check_bind`) unless `--insecure`.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable, Mapping
from http.cookies import CookieError, SimpleCookie

from starlette.requests import Request

from docqa.access import LOCAL, Principal
from docqa.errors import AuthError, ConfigError, PermissionDeniedError
from docqa.kb import KnowledgeBase

# The sign-in cookie holds the key itself, HTTP-only (no script of the page can read it) and SameSite=Strict:
# each request authenticates it exactly as a Bearer key, so a revoked key ends the cookie's access at once,
# with no session table to keep in step (and none to lose when the server restarts).
COOKIE = "docqa_key"
_HOW = "send it as 'Authorization: Bearer dq_…' or 'X-API-Key: dq_…' (an admin creates keys: 'docqa keys create')"


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost; False for 0.0.0.0, :: and every other name or address."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, insecure: bool, kb: KnowledgeBase) -> None:
    """Refuse to serve a non-loopback address without API keys, unless `insecure` (ConfigError: what to do)."""
    if is_loopback(host) or insecure or kb.keys.required():
        return
    raise ConfigError(
        f"refusing to serve on {host} without API keys: anyone who can reach it could read and change the "
        "knowledge base. Create one first ('docqa keys create --role admin'), serve on 127.0.0.1, or pass "
        "--insecure when something in front of docqa already authenticates every request")


def bearer(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries: `Authorization: Bearer …`, else `X-API-Key` (None: no key sent)."""
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    if scheme.lower() == "bearer":
        return token.strip()
    key = headers.get("x-api-key")
    return None if key is None else key.strip()


def cookie_key(headers: Mapping[str, str]) -> str | None:
    """The key in the sign-in cookie, if the request carries one."""
    raw = headers.get("cookie")
    if not raw or COOKIE not in raw:
        return None
    try:
        jar = SimpleCookie(raw)
    except CookieError:
        return None
    morsel = jar.get(COOKIE)
    return morsel.value.strip() if morsel is not None and morsel.value.strip() else None


def set_cookie(response, key: str, secure: bool) -> None:
    """Sign the browser in: the key in an HTTP-only, SameSite=Strict cookie for the browser session."""
    response.set_cookie(COOKIE, key, path="/", httponly=True, samesite="strict", secure=secure)


def clear_cookie(response, secure: bool) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=secure)


class Access:
    """Authenticates the requests of one server: `kb` holds the keys, `host` is the address it is bound to."""

    def __init__(self, kb: KnowledgeBase, host: str = "127.0.0.1", insecure: bool = False):
        self.kb, self.host, self.insecure = kb, host, insecure
        self.loopback = is_loopback(host)
        self._lock = threading.Lock()  # FastAPI's threadpool calls in from many threads; one connection


    def authenticate(self, headers: Mapping[str, str]) -> Principal:
        """The principal a request's headers name (a header's key first, then the sign-in cookie's);
        AuthError (401) when a key is needed and missing or bad."""
        key = bearer(headers)
        with self._lock:
            keyless = not self.kb.keys.required()
            if keyless and (self.loopback or self.insecure) and (key is None or not self.kb.keys.issued(key)):
                # no active key: a placeholder key is of no account (chat apps and the openai SDK always send one),
                # as is a cookie left from when keys existed; a revoked key is still refused, saying so
                return LOCAL.over_network()
            if key is not None:
                return Principal.of(self.kb.keys.authenticate(key))
            key = cookie_key(headers)
            if key is not None:
                return Principal.of(self.kb.keys.authenticate(key))
        raise AuthError(f"this server requires an API key: {_HOW}")

    def login(self, key: str) -> Principal:
        """The principal `key` names (AuthError when it is unknown or revoked), to sign a browser in with."""
        with self._lock:
            return Principal.of(self.kb.keys.authenticate(key))


def authenticate(headers: Mapping[str, str], kb: KnowledgeBase, host: str = "127.0.0.1",
                 insecure: bool = False) -> Principal:
    """One request's principal (see `Access.authenticate`)."""
    return Access(kb, host, insecure).authenticate(headers)


# -- the HTTP side: one error shape, and a FastAPI dependency -----------------------------------------

def error_status(exc: AuthError) -> int:
    """401 for a missing or bad key, 403 for a key that may not do this."""
    return 403 if isinstance(exc, PermissionDeniedError) else 401


def error_body(exc: AuthError) -> dict:
    """The API's error shape: {"error": {"code", "message"}}."""
    return {"error": {"code": exc.code, "message": str(exc)}}


def error_headers(exc: AuthError) -> dict[str, str]:
    return {} if isinstance(exc, PermissionDeniedError) else {"WWW-Authenticate": 'Bearer realm="docqa"'}


def dependency(access: Callable[..., Access]) -> Callable[..., Principal]:
    """A FastAPI dependency that returns the request's Principal (cached on `request.state`);
    `access(request)` finds the server's Access, e.g. `lambda request: request.app.state.access`."""
    def principal(request: Request) -> Principal:
        found = getattr(request.state, "principal", None)
        if found is None:
            found = access(request).authenticate(request.headers)
            request.state.principal = found
        return found

    return principal


__all__ = ["COOKIE", "LOCAL", "Access", "Principal", "authenticate", "bearer", "check_bind", "clear_cookie", "cookie_key",
           "dependency", "error_body", "error_headers", "error_status", "is_loopback", "set_cookie"]
