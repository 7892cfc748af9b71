"""POST /api/v1/verify: the real app in process over a real knowledge base; the scripted server is the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from llm.scripted_server import ScriptedServer

BOTH_BACKENDS = True  # a read over the search: the same on SQLite and PostgreSQL
HR = "# Leave\n\nEmployees get 25 days of paid leave a year.\n"
LEAVE = "Employees get 25 days of paid leave a year."


@pytest.fixture
def app_with_hr(make_app, tmp_path: Path):
    """make_app's knowledge base (ops.md and 运维.md in 'default') with hr.md in the collection 'hr'; and its keys."""
    def make(server=None):
        app = make_app(server)
        (tmp_path / "hr").mkdir(exist_ok=True)
        (tmp_path / "hr" / "hr.md").write_text(HR, encoding="utf-8")
        settings = Settings(kb=make_app.kb_path, embed={"provider": "none"}, llm={"provider": "none"})
        with KnowledgeBase(settings) as kb:
            kb.add([tmp_path / "hr"], "hr")
            keys = {"reader": kb.keys.create("reader")[1], "default": kb.keys.create("reader", ["default"])[1]}
        return app, keys

    return make


def _verify(client: TestClient, key: str, **body):
    return client.post("/api/v1/verify", json=body, headers={"Authorization": f"Bearer {key}"})


@pytest.mark.slow
def test_a_reader_key_verifies_claim_by_claim(app_with_hr):
    app, keys = app_with_hr()
    with TestClient(app) as client:
        ok = _verify(client, keys["reader"], text="Backups are kept for 35 days. 数据库每 6 小时备份一次。")
        assert ok.status_code == 200, ok.text
        data = ok.json()
        assert data["verdict"] == "supported" and [c["verdict"] for c in data["claims"]] == ["supported", "supported"]
        assert data["claims"][0]["citation"]["quote"] == "Backups are kept for 35 days."
        assert data["claims"][1]["citation"]["path"].endswith("运维.md")
        said = _verify(client, keys["reader"], text="Backups are kept for 30 days.", question="How long are backups kept?")
        assert said.status_code == 200 and said.json()["verdict"] == "contradicted"
        assert said.json()["claims"][0]["citation"]["quote"] == "Backups are kept for 35 days."
        assert _verify(client, keys["reader"], text=LEAVE).json()["verdict"] == "supported"
        nothing = _verify(client, keys["reader"], text="How long are backups kept?")
        assert nothing.status_code == 400 and "nothing to check" in nothing.json()["error"]["message"]
        assert _verify(client, keys["reader"], text="   ").status_code == 422
        assert client.post("/api/v1/verify", json={"text": LEAVE}).status_code == 401  # keys exist: one is needed


@pytest.mark.slow
def test_a_scoped_key_has_only_its_collections_as_evidence(app_with_hr):
    app, keys = app_with_hr()
    with TestClient(app) as client:
        hidden = _verify(client, keys["default"], text=LEAVE)  # supported only by a document of 'hr'
        assert hidden.status_code == 200 and hidden.json()["verdict"] == "not_found"
        assert hidden.json()["claims"][0]["citation"] is None and hidden.json()["collection"] == "default"
        refused = _verify(client, keys["default"], text=LEAVE, collection="hr")
        assert refused.status_code == 403 and "cannot use collection 'hr'" in refused.json()["error"]["message"]
        assert _verify(client, keys["default"], text="Backups are kept for 35 days.").json()["verdict"] == "supported"


@pytest.mark.slow
def test_the_models_verdict_over_http(app_with_hr):
    with ScriptedServer([{"text": "REJECTED"}, {"status": 500}]) as server:
        app, keys = app_with_hr(server)
        with TestClient(app) as client:
            judged = _verify(client, keys["reader"], text="Backups are kept for 35 days.", llm=True).json()
            assert (judged["verdict"], judged["checker"]) == ("not_found", "deterministic+llm")
            assert "Backups are kept for 35 days." in server.requests[0]["messages"][-1]["content"]
            failed = _verify(client, keys["reader"], text="Backups are kept for 35 days.", llm=True).json()
            assert failed["verdict"] == "supported" and "fact-check failed" in failed["notes"][0]
            assert server.base_url not in failed["notes"][0]  # the server's own addresses stay out of the reply
            skipped = _verify(client, keys["reader"], text="Backups are kept for 35 days.", llm=False).json()
            assert skipped["checker"] == "deterministic" and len(server.requests) == 2
