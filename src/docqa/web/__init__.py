"""The web page at `/`: plain HTML, CSS and vanilla JavaScript shipped in the package (no build step,
no CDN: every asset is served from here, so the page works offline).

The page is a thin front end over the REST/SSE API at /api/v1: it decides nothing about access
(every data call is an API call, with the same key), so this package imports nothing of docqa's.
`mount(app)` adds `GET /` (the page) and `/static/…` (its assets) to an ASGI app built by docqa.api, and the
API's documentation pages, /docs and /redoc, with their assets (`docqa.web.apidocs`).
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles

from docqa.web import apidocs

STATIC = Path(__file__).parent / "static"
# No inline script or style, nothing from another origin.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-cache"}


class _Static(StaticFiles):
    """The page's assets, with the page's security headers."""

    async def get_response(self, path: str, scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(HEADERS)
        return response


async def page(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8", headers=HEADERS)


def mount(app: Starlette) -> None:
    """Serve the page at `/` and its assets at `/static/`, and /docs and /redoc (hidden from the OpenAPI schema);
    the app must be made without FastAPI's own docs (`docs_url=None, redoc_url=None`), which load from a CDN."""
    app.add_route("/", page, methods=["GET"], include_in_schema=False)
    app.mount("/static", _Static(directory=STATIC), name="web-static")
    apidocs.mount(app, getattr(app, "title", "docqa"))
