"""The dependencies every route takes: the server's Runtime, and who is calling (a Principal).

`get_principal` is the one place authentication plugs in: by default every caller is the local
user (admin, every collection; `docqa serve` then listens on loopback only); `create_app` replaces
it with `docqa.api.auth`'s dependency.
Routes never read credentials themselves: they depend on `reader`, `editor` or `admin`.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Depends
from starlette.requests import Request

from docqa.access import LOCAL, Principal
from docqa.api.errors import ApiError
from docqa.api.runtime import Runtime
from docqa.kb import KnowledgeBase


def get_principal(request: Request) -> Principal:
    """Who is calling (create_app replaces this with the API-key dependency)."""
    return LOCAL


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    if not runtime.started:
        raise ApiError(503, "unavailable", "the server is starting or stopping: retry in a moment",
                       {"Retry-After": str(runtime.settings.api.retry_after)})
    return runtime


def may(action: str, limited: bool = True) -> Callable[..., Principal]:
    """A dependency: the caller, refused (403) when the policy does not allow it `action` at all, and (429)
    when it is over its rate limit (unless not `limited`).  The core checks again, per collection."""

    def check(request: Request, principal: Principal = Depends(get_principal)) -> Principal:
        KnowledgeBase.authorize(principal, action)  # asked of the core's one policy; the route decides nothing
        limiter = request.app.state.runtime.limiter
        if limited and limiter.enabled:
            client = request.client.host if request.client else "unknown"
            limiter.take(f"key:{principal.key_id}" if principal.key_id else f"address:{client}")
        return principal

    check.__name__ = f"may_{action}"
    return check


reader = may("read")
scraper = may("read", limited=False)  # metrics: a monitor polls it, and must not be paced
editor = may("write")
logger = may("log")
corrector = may("correct")
monitor = may("status")
reindexer = may("reindex")
admin = may("keys")
