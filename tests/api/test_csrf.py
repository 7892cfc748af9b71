"""Signing a browser in (an HTTP-only cookie) and out, and writes from another origin refused (CSRF),
over real HTTP on loopback: a keyless loopback server must not let any web page plant a document."""

from __future__ import annotations

import httpx
import pytest
from fastapi.testclient import TestClient

from docqa.api.auth import COOKIE
from docqa.api.guard import OriginGuard
from docqa.kb import KnowledgeBase

from api.conftest import job_done

EVIL = "http://evil.example"
PLANTED = ("planted.md", b"# Planted\n\nThe admin password is hunter2.\n", "text/markdown")


def _paths(c) -> list[str]:
    return [d["path"] for d in c.get("/api/v1/documents?limit=1000").json()["documents"]]


def _plant(c, **headers):
    return c.post("/api/v1/documents", files=[("files", PLANTED)], headers=headers)


@pytest.mark.slow
def test_a_cross_origin_upload_to_a_keyless_loopback_server_is_refused(make_app, live):
    server = live(make_app())
    with httpx.Client(base_url=server.url, timeout=30) as c:
        before = _paths(c)
        for headers in ({"Origin": EVIL}, {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"},
                        {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"},
                        {"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}):  # another port
            r = _plant(c, **headers)
            assert r.status_code == 403, headers
            assert r.json() == {"error": {"code": "cross_origin", "message": r.json()["error"]["message"]}}
            assert "another origin" in r.json()["error"]["message"]
        assert c.delete("/api/v1/documents/x", headers={"Origin": EVIL}).status_code == 403
        assert c.post("/api/v1/ask", json={"question": "q"}, headers={"Origin": EVIL}).status_code == 403
        assert _paths(c) == before and not any("planted" in p for p in before)  # nothing indexed

        r = _plant(c, Origin=server.url, **{"Sec-Fetch-Site": "same-origin"})  # the page itself
        assert r.status_code == 202, r.text
        assert job_done(c, r)["status"] == "succeeded"
        assert any(p.endswith("planted.md") for p in _paths(c))
        assert c.get("/api/v1/documents", headers={"Origin": EVIL}).status_code == 200  # reads are not writes
        assert _plant(c).status_code == 202  # curl: no Origin, no cookie


def test_login_sets_an_http_only_strict_cookie_that_revocation_ends(make_app):
    app = make_app()
    with KnowledgeBase(app.state.runtime.settings) as kb:
        record, key = kb.keys.create("editor", [], "browser")
        kb.keys.create("admin")  # another key stays: revoking the last one would make the server keyless
    with TestClient(app, raise_server_exceptions=False) as c:
        assert c.get("/api/v1/whoami").status_code == 401
        bad = c.post("/api/v1/login", json={"key": "dq_wrong"})
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "unauthorized" and COOKIE not in c.cookies
        r = c.post("/api/v1/login", json={"key": key})
        assert r.status_code == 200 and r.json() == {"role": "editor", "collections": [], "key_id": record.id}
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert "Path=/" in cookie and "Secure" not in cookie and "Max-Age" not in cookie  # for the browser session
        assert c.get("/api/v1/whoami").json()["key_id"] == record.id  # the cookie alone authenticates
        with KnowledgeBase(app.state.runtime.settings) as kb:
            kb.keys.revoke(record.id)
        gone = c.get("/api/v1/whoami")
        assert gone.status_code == 401 and "revoked" in gone.json()["error"]["message"]  # at once

    with TestClient(app, base_url="https://testserver") as c:
        with KnowledgeBase(app.state.runtime.settings) as kb:
            _, key = kb.keys.create("reader")
        assert "Secure" in c.post("/api/v1/login", json={"key": key}).headers["set-cookie"]
        assert c.get("/api/v1/whoami").json()["role"] == "reader"
        assert c.post("/api/v1/logout").status_code == 403  # with the cookie, a write needs its Origin
        out = c.post("/api/v1/logout", headers={"Origin": "https://testserver"})
        assert out.status_code == 200 and "Max-Age=0" in out.headers["set-cookie"]
        assert COOKIE not in c.cookies and c.get("/api/v1/whoami").status_code == 401


@pytest.mark.slow
def test_with_keys_cookie_writes_need_the_own_origin_and_bearer_scripts_need_none(make_app, live):
    app = make_app()
    with KnowledgeBase(app.state.runtime.settings) as kb:
        _, key = kb.keys.create("editor")
    server = live(app)
    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.post("/api/v1/login", json={"key": key}, headers={"Origin": EVIL}).status_code == 403  # login CSRF
        assert c.post("/api/v1/login", json={"key": key}, headers={"Origin": server.url}).status_code == 200
        assert c.cookies.get(COOKIE) == key
        refused = _plant(c, Origin=EVIL)  # the cookie goes along, but the page is not ours
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "cross_origin"
        no_origin = _plant(c)  # a cookie but no Origin: not a browser we can tell apart from a forged one
        assert no_origin.status_code == 403 and "Origin" in no_origin.json()["error"]["message"]
        assert job_done(c, _plant(c, Origin=server.url))["status"] == "succeeded"
    with httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {key}"}) as sdk:
        r = sdk.post("/api/v1/documents", files=[("files", ("bearer.md", b"# B\n\nbearer text\n", "text/markdown"))])
        assert r.status_code == 202 and job_done(sdk, r)["status"] == "succeeded"  # a Bearer key, no Origin, no cookie
    with httpx.Client(base_url=server.url, timeout=30) as bare:
        assert _plant(bare).status_code == 401  # and without a key, no write at all


@pytest.mark.parametrize("headers, refused", [
    ({"origin": "https://docs.example.org", "host": "127.0.0.1:8000"}, False),  # a name in allowed_hosts (a proxy)
    ({"origin": "https://a.team.example", "host": "127.0.0.1:8000"}, False),  # '*.team.example'
    ({"origin": "https://team.example.evil", "host": "127.0.0.1:8000"}, True),
    ({"origin": "http://localhost:5173", "host": "127.0.0.1:8000"}, False),  # api.cors_origins
    ({"origin": "http://localhost:5173", "sec-fetch-site": "same-site", "host": "127.0.0.1:8000"}, False),
    ({"origin": "http://127.0.0.1:8000", "host": "127.0.0.1:8000"}, False),
    ({"origin": "http://127.0.0.1:8001", "host": "127.0.0.1:8000"}, True),  # another port: another origin
    ({"origin": "javascript:alert(1)", "host": "127.0.0.1:8000"}, True),
    ({"origin": "http://[::1", "host": "127.0.0.1:8000"}, True),  # unparsable
    ({"sec-fetch-site": "none", "host": "127.0.0.1:8000"}, False),  # typed by the user
    ({"cookie": "other=1", "host": "127.0.0.1:8000"}, False),
    ({"cookie": f"{COOKIE}=dq_x", "host": "127.0.0.1:8000"}, True),
    ({"cookie": f"{COOKIE}=dq_x", "sec-fetch-site": "same-origin", "host": "127.0.0.1:8000"}, False),
])
def test_origin_rules(headers, refused):
    guard = OriginGuard(None, ["docs.example.org", "*.team.example", "*"], ["http://localhost:5173/"], COOKIE)
    assert (guard.refusal(headers) is not None) is refused


def test_login_guesses_are_paced_by_the_rate_limit(make_app):
    with TestClient(make_app(rate_limit=60, rate_burst=2), raise_server_exceptions=False) as c:
        statuses = [c.post("/api/v1/login", json={"key": f"dq_guess{i}"}).status_code for i in range(4)]
    assert statuses[:2] == [401, 401] and statuses[2:] == [429, 429]
