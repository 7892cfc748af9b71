"""The page without a browser: GET / serves it with its security headers, every asset it references is
served by docqa itself (nothing from another host), and the source text endpoint answers by the core's access."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest
from fastapi.testclient import TestClient

from docqa.kb import KnowledgeBase
from docqa.web import STATIC

EXTERNAL = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def _references(path: str, text: str) -> list[str]:
    """The URLs an HTML, JS or CSS file makes the browser load."""
    if path.endswith(".html"):
        found = re.findall(r"""(?:src|href)=["']([^"']+)["']""", text)
    elif path.endswith(".js"):
        found = re.findall(r"""(?:import|from)\s*["']([^"']+)["']""", text)
    else:
        found = re.findall(r"""url\(["']?([^"')]+)""", text)
    return [urljoin(path, f) for f in found if not f.startswith("data:")]


@pytest.mark.slow
def test_the_page_and_every_asset_it_references_are_served_locally(web_app):
    with TestClient(web_app) as client:
        response = client.get("/")
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        assert '<textarea id="question"' in response.text
        seen, todo = set(), ["/"]
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            r = client.get(path)
            assert r.status_code == 200, path
            assert not EXTERNAL.search(r.text), f"{path} refers to another host"
            todo.extend(_references("/static/index.html" if path == "/" else path, r.text))
        assert {"/static/app.js", "/static/app.css", "/static/api.js", "/static/viewer.js", "/static/steps.js"} <= seen
        assert client.get("/openapi.json").json()["paths"].get("/") is None  # the page is not an API route


def test_every_shipped_file_is_local_and_has_no_inline_script():
    files = sorted(STATIC.iterdir())
    assert files and all(f.suffix in {".html", ".js", ".css"} for f in files)
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert not EXTERNAL.search(text), f.name
        assert len(text.splitlines()) < 400, f.name
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline script (the CSP forbids it)"
    assert not re.search(r"\son[a-z]+=", html), "an inline event handler (the CSP forbids it)"


@pytest.mark.slow
def test_the_source_text_goes_through_the_core(web_app, web_settings):
    with KnowledgeBase(web_settings) as kb:
        ids = {d.collection: d.document_id for d in kb.documents.list(None)}
        _, reader_a = kb.keys.create("reader", ["A"], "a reader")
    with TestClient(web_app) as client:
        a = client.get(f"/api/v1/documents/{ids['A']}/text", headers={"Authorization": f"Bearer {reader_a}"})
        assert a.status_code == 200 and "Backups are kept for 35 days." in a.json()["text"]
        b = client.get(f"/api/v1/documents/{ids['B']}/text", headers={"Authorization": f"Bearer {reader_a}"})
        missing = client.get("/api/v1/documents/nothere/text", headers={"Authorization": f"Bearer {reader_a}"})
        assert b.status_code == missing.status_code == 404
        assert b.json()["error"]["code"] == missing.json()["error"]["code"]
        assert "Invoices" not in b.text and ids["B"] in b.json()["error"]["message"]
        assert client.get(f"/api/v1/documents/{ids['A']}/text").status_code == 401  # keys exist: no key, no text
        for odd in ("..", "é文", "x" * 200, "a%20b"):
            r = client.get(f"/api/v1/documents/{odd}/text", headers={"Authorization": f"Bearer {reader_a}"})
            assert r.status_code == 404 and set(r.json()["error"]) == {"code", "message"}, odd
        nul = client.get("/api/v1/documents/%00/text", headers={"Authorization": f"Bearer {reader_a}"})
        assert nul.status_code == 422 and "NUL" in nul.json()["error"]["message"]  # no NUL reaches a database
        assert client.get(f"/api/v1/documents/{'x' * 201}/text", headers={"Authorization": f"Bearer {reader_a}"}
                          ).status_code == 422
