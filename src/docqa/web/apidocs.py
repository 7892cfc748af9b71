"""The API's documentation pages, /docs (Swagger UI) and /redoc (ReDoc), with every asset served by docqa itself.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc's fonts from Google), so offline they
are blank.  Their assets come from the `fastapi-offline` package instead: MIT, one dependency (fastapi,
unpinned), and it ships just the three files we need (swagger-ui-bundle.js, swagger-ui.css,
redoc.standalone.js, about 2.8 MB), where `swagger-ui-bundle` ships no ReDoc and drags in Jinja2, and
`drf-spectacular-sidecar` requires Django.  Only its files are used, not its FastAPI factory: the pages here
start the UIs from our own scripts (apidocs/*.js), so their CSP allows no inline script.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

ASSETS = "/docs-assets"
OURS = Path(__file__).parent / "apidocs"
# ReDoc injects its styles as <style> elements (styled-components) and runs its search in a blob: worker;
# nothing may come from another origin.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="data:,">
{css}</head>
<body>
<div id="{root}"></div>
<script src="{assets}/{bundle}"></script>
<script src="{assets}/{init}"></script>
</body>
</html>
"""


def _vendored() -> Path | None:
    spec = importlib.util.find_spec("fastapi_offline")
    return Path(spec.origin).parent / "static" if spec and spec.origin else None


def _files() -> dict[str, Path]:
    files = {"swagger-init.js": OURS / "swagger-init.js", "redoc-init.js": OURS / "redoc-init.js"}
    vendored = _vendored()
    if vendored is not None:
        files |= {name: vendored / name for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js")}
    return files


def _missing() -> Response:
    return JSONResponse({"error": {"code": "missing_extra", "message": "the API docs need the fastapi-offline package: "
                                   "pip install 'docqa[api]'"}}, status_code=503)


def mount(app: Starlette, title: str = "docqa") -> None:
    """/docs, /redoc and their assets under /docs-assets (hidden from the OpenAPI schema)."""
    files = _files()
    swagger = _PAGE.format(title=f"{title} – API", root="swagger-ui", assets=ASSETS, bundle="swagger-ui-bundle.js",
                           init="swagger-init.js", css=f'<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">\n')
    redoc = _PAGE.format(title=f"{title} – API", root="redoc", assets=ASSETS, bundle="redoc.standalone.js",
                         init="redoc-init.js", css="")

    def page(html: str):
        async def serve(request: Request) -> Response:
            if "swagger-ui.css" not in files:
                return _missing()
            return Response(html, media_type="text/html; charset=utf-8", headers=HEADERS)
        return serve

    async def asset(request: Request) -> Response:
        path = files.get(request.path_params["name"])
        if path is None:
            return _missing() if request.path_params["name"] in ("swagger-ui-bundle.js", "swagger-ui.css",
                                                                 "redoc.standalone.js") else \
                JSONResponse({"error": {"code": "not_found", "message": "no such file"}}, status_code=404)
        return FileResponse(path, headers={**HEADERS, "Cache-Control": "public, max-age=86400"})

    app.add_route("/docs", page(swagger), methods=["GET"], include_in_schema=False)
    app.add_route("/redoc", page(redoc), methods=["GET"], include_in_schema=False)
    app.add_route(ASSETS + "/{name}", asset, methods=["GET"], include_in_schema=False)
