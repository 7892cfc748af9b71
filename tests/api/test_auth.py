"""Access: API keys stored hashed, who a request is (401), what a key may do (403), and the bind check.

The auth matrix (roles × operations, collection scoping) runs against `docqa.access` and the
authenticator here, and against the HTTP app in process when `docqa.api.app` exists.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from docqa.access import LOCAL, Principal, check_grant, manageable, require, scope
from docqa.api.auth import Access, bearer, check_bind, is_loopback
from docqa.cli import app as cli
from docqa.errors import AuthError, ConfigError, InputError, NotFoundError, PermissionDeniedError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings


ROLES = ("reader", "editor", "admin")
OPERATIONS = {"search": "reader", "ask": "reader", "verify": "reader", "ingest": "editor", "delete": "editor", "manage keys": "admin"}


@pytest.fixture
def kb(tmp_path: Path):
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})) as kb:
        yield kb


# -- keys are stored hashed ---------------------------------------------------------------------------

def test_a_key_is_never_stored_only_its_hash(kb, tmp_path: Path):
    record, key = kb.keys.create("editor", ["ops"], "ci")
    assert key.startswith("dq_") and len(key) >= 40 and key.startswith(record.prefix)
    kb.store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for path in tmp_path.glob("kb.db*"):  # the database, and its WAL and shared memory if any
        data = path.read_bytes()
        assert key.encode() not in data and key[len(record.prefix):].encode() not in data, path.name
    row = sqlite3.connect(tmp_path / "kb.db").execute("SELECT hash, role, collections, name FROM api_keys").fetchone()
    assert row == (hashlib.sha256(key.encode()).hexdigest(), "editor", json.dumps(["ops"]), "ci")
    assert "hash" not in record.to_dict() and key not in json.dumps([k.to_dict() for k in kb.keys.list()])


def test_authenticate_revoke_and_last_use(kb):
    record, key = kb.keys.create("reader")
    assert record.last_used_at is None
    found = kb.keys.authenticate(f"  {key} ")
    assert (found.id, found.role, found.collections) == (record.id, "reader", [])
    assert kb.keys.list()[0].last_used_at is not None
    with pytest.raises(AuthError, match="unknown API key"):
        kb.keys.authenticate(key[:-1] + ("A" if key[-1] != "A" else "B"))
    with pytest.raises(AuthError, match="unknown API key"):
        kb.keys.authenticate("")
    kb.keys.revoke(record.id)
    with pytest.raises(AuthError, match="revoked"):
        kb.keys.authenticate(key)
    assert kb.keys.list() == [] and kb.keys.list(include_revoked=True)[0].revoked_at
    assert not kb.keys.required()
    with pytest.raises(NotFoundError, match="docqa keys list"):
        kb.keys.revoke("nope")
    with pytest.raises(InputError, match="unknown role 'owner'"):
        kb.keys.create("owner")


def test_keys_are_distinct_and_collections_normalised(kb):
    keys = {kb.keys.create("reader", [" b ", "a", "a", ""])[1] for _ in range(20)}
    assert len(keys) == 20
    assert {tuple(k.collections) for k in kb.keys.list()} == {("a", "b")}


# -- who a request is: 401 ------------------------------------------------------------------------------

@pytest.mark.parametrize("headers, key", [
    ({"authorization": "Bearer dq_abc"}, "dq_abc"),
    ({"authorization": "bearer   dq_abc "}, "dq_abc"),
    ({"x-api-key": "dq_abc"}, "dq_abc"),
    ({"authorization": "Basic Zm9vOmJhcg==", "x-api-key": "dq_abc"}, "dq_abc"),
    ({"authorization": "Bearer "}, ""),
    ({}, None),
])
def test_bearer(headers, key):
    assert bearer(headers) == key


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.5.0.1", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.10", False), ("example.com", False), ("localhost.evil", False),
])
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_loopback_without_keys_is_the_local_admin(kb):
    assert Access(kb, "127.0.0.1").authenticate({}) == LOCAL.over_network()  # the local owner, but over HTTP
    # a key sent anyway (OpenAI clients always send one) is not checked: there is no key to check it against
    assert Access(kb, "127.0.0.1").authenticate({"authorization": "Bearer sk-placeholder"}) == LOCAL.over_network()
    assert LOCAL.allows("admin") and LOCAL.can_see("any")


def test_once_a_key_exists_every_request_needs_one_even_on_loopback(kb):
    _, key = kb.keys.create("reader", ["ops"])
    access = Access(kb, "127.0.0.1")
    with pytest.raises(AuthError, match="requires an API key") as missing:
        access.authenticate({})
    assert not isinstance(missing.value, PermissionDeniedError) and missing.value.code == "unauthorized"
    with pytest.raises(AuthError, match="unknown API key"):
        access.authenticate({"authorization": "Bearer dq_nope"})
    who = access.authenticate({"x-api-key": key})
    assert (who.role, who.collections) == ("reader", ("ops",)) and who.key_id


def test_a_non_loopback_server_without_keys(kb):
    with pytest.raises(AuthError):  # check_bind refuses to start it; were it started, nobody gets in
        Access(kb, "0.0.0.0").authenticate({})
    assert Access(kb, "0.0.0.0", insecure=True).authenticate({}) == LOCAL.over_network()


def test_check_bind(kb):
    check_bind("127.0.0.1", False, kb)
    check_bind("0.0.0.0", True, kb)
    with pytest.raises(ConfigError, match="refusing to serve on 0.0.0.0 without API keys") as refused:
        check_bind("0.0.0.0", False, kb)
    assert "docqa keys create" in str(refused.value) and "--insecure" in str(refused.value)
    kb.keys.create("admin")
    check_bind("0.0.0.0", False, kb)


# -- what a key may do: 403 -------------------------------------------------------------------------------

@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_role_matrix(role, operation):
    needed = OPERATIONS[operation]
    action = {"reader": "read", "editor": "write", "admin": "keys"}[needed]
    principal = Principal(role, (), "k1")
    if ROLES.index(role) >= ROLES.index(needed):
        require(principal, action)
    else:
        with pytest.raises(PermissionDeniedError, match=f"you need an? {needed} key") as denied:
            require(principal, action)
        assert denied.value.code == "forbidden"


def test_collection_scoping():
    one, two = Principal("reader", ("ops",), "k1"), Principal("editor", ("dev", "ops"), "k2")
    assert scope(LOCAL, None) is None and scope(LOCAL, "dev") == "dev"
    assert scope(one, None) == "ops" and scope(one, "ops") == "ops"
    with pytest.raises(PermissionDeniedError, match="cannot use collection 'dev'"):
        scope(one, "dev")
    with pytest.raises(InputError, match="name one of them"):
        scope(two, None)
    assert scope(two, "dev") == "dev"
    assert two.visible(["default", "dev", "ops", "hr"]) == ["dev", "ops"]
    assert LOCAL.visible(["a", "b"]) == ["a", "b"]


def test_a_scoped_admin_manages_only_keys_within_its_collections(kb):
    admin = Principal("admin", ("ops",), "k0")
    check_grant(admin, ["ops"])
    for wanted in ([], ["dev"], ["ops", "dev"]):
        with pytest.raises(PermissionDeniedError, match="scoped to ops"):
            check_grant(admin, wanted)
    with pytest.raises(PermissionDeniedError):
        check_grant(Principal("editor"), ["ops"])
    mine, _ = kb.keys.create("reader", ["ops"])
    kb.keys.create("reader", ["dev"])
    kb.keys.create("reader")
    assert [k.id for k in manageable(admin, kb.keys.list())] == [mine.id]
    assert len(manageable(LOCAL, kb.keys.list())) == 3


# -- the CLI -------------------------------------------------------------------------------------------------

def test_cli_keys_create_list_revoke(tmp_path: Path):
    runner, db = CliRunner(), str(tmp_path / "kb.db")
    created = runner.invoke(cli, ["--kb", db, "keys", "create", "--role", "editor", "-c", "ops", "-n", "ci"])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip()
    assert key.startswith("dq_") and "\n" not in key and "not shown again" in created.stderr
    listed = runner.invoke(cli, ["--kb", db, "keys", "list", "--json"])
    rows = json.loads(listed.stdout)
    assert [(r["role"], r["collections"], r["name"]) for r in rows] == [("editor", ["ops"], "ci")]
    assert key not in listed.stdout and key[:11] in runner.invoke(cli, ["--kb", db, "keys", "list"]).stdout
    revoked = runner.invoke(cli, ["--kb", db, "keys", "revoke", rows[0]["id"]])
    assert revoked.exit_code == 0 and "revoked editor key" in revoked.stdout
    assert json.loads(runner.invoke(cli, ["--kb", db, "keys", "list", "--json"]).stdout) == []
    bad = runner.invoke(cli, ["--kb", db, "keys", "create", "--role", "owner"])
    assert bad.exit_code != 0


# -- the auth matrix over HTTP: the real app, in process ------------------------------------------------

def _requests(docs: Path, doc_id: str) -> dict[str, tuple[str, str, dict | None]]:
    """operation -> (method, path, JSON body), one request each (see OPERATIONS for the role it needs)."""
    return {
        "search": ("POST", "/api/v1/search", {"query": "backups"}),
        "ask": ("POST", "/api/v1/ask", {"question": "How long are backups kept?"}),
        "verify": ("POST", "/api/v1/verify", {"text": "Backups are kept for 35 days."}),
        "ingest": ("POST", "/api/v1/documents:ingest", {"paths": [str(docs)]}),
        "delete": ("DELETE", f"/api/v1/documents/{doc_id}", None),
        "manage keys": ("POST", "/api/v1/keys", {"role": "reader", "name": "made over HTTP"}),
    }


def _settings(tmp_path: Path, **api) -> Settings:
    return Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                    api={"upload_dir": str(tmp_path / "uploads"), "allowed_hosts": ["testserver"], **api})


def _call(client, request: tuple[str, str, dict | None], key: str | None = None):
    method, path, body = request
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.request(method, path, json=body, headers=headers)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.slow
def test_http_role_matrix(role, make_app, tmp_path: Path, docs: Path):
    app = make_app()
    with KnowledgeBase(_settings(tmp_path)) as kb:
        _, key = kb.keys.create(role)
        doc_id = kb.documents.list()[0].document_id
    requests = _requests(docs, doc_id)
    with TestClient(app) as client:
        for operation, request in requests.items():
            response = _call(client, request, key)
            if ROLES.index(role) >= ROLES.index(OPERATIONS[operation]):
                assert response.status_code < 300, (operation, response.text)
            else:
                assert response.status_code == 403, (operation, response.text)
                assert response.json()["error"]["code"] == "forbidden"
                assert re.search(f"you need an? {OPERATIONS[operation]} key", response.json()["error"]["message"])
        for operation, request in requests.items():  # keys exist: no key, or a bad one, is 401 everywhere
            for bad in (None, "dq_not-a-key"):
                response = _call(client, request, bad)
                assert response.status_code == 401, (operation, bad, response.text)
                assert response.json()["error"]["code"] == "unauthorized"
                assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.slow
def test_http_without_keys_on_loopback_is_the_local_admin(client):
    assert client.get("/api/v1/whoami").json() == {"role": "admin", "collections": [], "key_id": None}
    made = client.post("/api/v1/keys", json={"role": "editor", "collections": ["ops"]})
    assert made.status_code == 201 and made.json()["key"].startswith("dq_")
    assert client.get("/api/v1/whoami").status_code == 401  # the first key ends anonymous access
    headers = {"X-API-Key": made.json()["key"]}
    assert client.get("/api/v1/whoami", headers=headers).json()["role"] == "editor"


def test_http_non_loopback_without_keys(tmp_path: Path, docs: Path):
    from docqa.api import create_app

    with TestClient(create_app(_settings(tmp_path, host="0.0.0.0"))) as client:
        assert client.get("/api/v1/whoami").status_code == 401
    with TestClient(create_app(_settings(tmp_path, host="0.0.0.0"), insecure=True)) as client:
        assert client.get("/api/v1/whoami").json()["role"] == "admin"


def test_serve_refuses_a_public_address_without_keys(tmp_path: Path):
    KnowledgeBase(_settings(tmp_path)).close()  # 'docqa serve' needs a knowledge base that exists
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path / "kb.db"), "serve", "--host", "0.0.0.0"])
    assert isinstance(result.exception, ConfigError) and "without API keys" in str(result.exception)


def test_http_collection_scoping(make_app, tmp_path: Path, docs: Path):
    app = make_app()  # docs/ is in the collection 'default'
    with KnowledgeBase(_settings(tmp_path)) as kb:
        _, other = kb.keys.create("editor", ["other"])
        _, both = kb.keys.create("reader", ["default", "other"])
        _, scoped_admin = kb.keys.create("admin", ["other"])
        doc_id = kb.documents.list()[0].document_id
    with TestClient(app) as client:
        def call(method, path, key, body=None):
            return client.request(method, path, json=body, headers={"Authorization": f"Bearer {key}"})

        assert call("POST", "/api/v1/search", other, {"query": "backups"}).json()["hits"] == []
        refused = call("POST", "/api/v1/search", other, {"query": "backups", "collection": "default"})
        assert refused.status_code == 403 and "cannot use collection 'default'" in refused.json()["error"]["message"]
        assert call("GET", "/api/v1/documents", other).json()["total"] == 0
        assert call("DELETE", f"/api/v1/documents/{doc_id}", other).status_code == 404  # not its collection: unseen
        assert call("POST", "/api/v1/search", both, {"query": "backups"}).status_code == 400  # name one of them
        assert call("POST", "/api/v1/search", both, {"query": "backups", "collection": "default"}).json()["hits"]
        assert [c["name"] for c in call("GET", "/api/v1/collections", both).json()["collections"]] == ["default"]
        # a scoped admin makes keys only within its collections, and sees only those
        assert call("POST", "/api/v1/keys", scoped_admin, {"role": "reader"}).status_code == 403
        assert call("POST", "/api/v1/keys", scoped_admin, {"role": "reader", "collections": ["default"]}).status_code == 403
        made = call("POST", "/api/v1/keys", scoped_admin, {"role": "reader", "collections": ["other"]})
        assert made.status_code == 201
        listed = call("GET", "/api/v1/keys", scoped_admin).json()["keys"]
        assert {k["collections"] == ["other"] for k in listed} == {True} and len(listed) == 3
        others = [k for k in kb_keys(tmp_path) if k.collections != ["other"]]
        assert call("DELETE", f"/api/v1/keys/{others[0].id}", scoped_admin).status_code == 404
        assert call("DELETE", f"/api/v1/keys/{made.json()['id']}", scoped_admin).json()["revoked"]["revoked_at"]


def kb_keys(tmp_path: Path):
    with KnowledgeBase(_settings(tmp_path)) as kb:
        return kb.keys.list()


@pytest.mark.slow
def test_http_runs_and_sessions_are_seen_only_within_a_keys_collections(make_app, tmp_path: Path, docs: Path):
    """A run asked over one collection is not visible (404, as if it did not exist) to a key scoped
    to another: not its record, its feedback, its steering, its conversation, nor continuing it."""
    app = make_app()  # docs/ is in the collection 'default'
    with KnowledgeBase(_settings(tmp_path)) as kb:
        _, mine = kb.keys.create("reader", ["default"])
        _, other = kb.keys.create("reader", ["other"])
        _, everyone = kb.keys.create("reader")
        _, maintainer = kb.keys.create("editor", ["default"])
        _, other_maintainer = kb.keys.create("editor", ["other"])
    with TestClient(app) as client:
        def call(method, path, key, body=None):
            return client.request(method, path, json=body, headers={"Authorization": f"Bearer {key}"})

        asked = call("POST", "/api/v1/ask", mine, {"question": "How long are backups kept?", "session_id": "s-default"})
        run_id = asked.json()["run_id"]
        assert call("GET", f"/api/v1/runs/{run_id}", mine).json()["collection"] == "default"
        assert call("GET", f"/api/v1/runs/{run_id}", everyone).status_code == 200
        for method, path, body in (("GET", f"/api/v1/runs/{run_id}", None),
                                   ("POST", f"/api/v1/runs/{run_id}/feedback", {"rating": "down"}),
                                   ("POST", f"/api/v1/runs/{run_id}/cancel", None),
                                   ("GET", "/api/v1/sessions/s-default", None),
                                   ("POST", "/api/v1/ask", {"question": "and how often?", "session_id": "s-default"})):
            refused = call(method, path, other, body)
            assert refused.status_code == 404, (method, path, refused.text)
            assert "backups" not in refused.text.lower()  # nothing of the run shows
        missing = call("GET", "/api/v1/runs/no-such-run", other).json()["error"]["message"]
        hidden = call("GET", f"/api/v1/runs/{run_id}", other).json()["error"]["message"]
        assert hidden == missing.replace("no-such-run", run_id)  # the same answer as for no run at all
        session = call("GET", "/api/v1/sessions/s-default", mine).json()
        assert [r["id"] for r in session["runs"]] == [run_id] and session["runs"][0]["collection"] == "default"
        assert call("GET", "/api/v1/log", mine).status_code == 403  # the log is for maintainers (editors)
        assert [q["run_id"] for q in call("GET", "/api/v1/log", maintainer).json()["questions"]] == [run_id]
        assert call("GET", "/api/v1/log", other_maintainer).json() == {"questions": [], "total": 0}
        # a run over every collection is seen only by keys that see every collection
        wide = call("POST", "/api/v1/ask", everyone, {"question": "How long are backups kept?"}).json()["run_id"]
        assert call("GET", f"/api/v1/runs/{wide}", everyone).status_code == 200
        assert call("GET", f"/api/v1/runs/{wide}", mine).status_code == 404

