"""Stale answers over REST, on both backends: GET /runs/{id}, the log (?stale=, kind=stale, jsonl) and a
session's runs say when a cited source changed; POST /runs/{id}/recheck re-verifies the answer, records
it with the run, and is refused (404) for a run the key may not see."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from api.test_errors import assert_error
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

BOTH_BACKENDS = True
FINANCE = "# Finance\n\n## Invoices\n\nInvoices are paid within 30 days of receipt.\n"


@pytest.mark.slow
def test_a_run_goes_stale_when_its_span_is_edited_and_recheck_shows_the_diff(make_app, docs, tmp_path):
    finance = tmp_path / "finance"
    finance.mkdir()
    (finance / "b.md").write_text(FINANCE, encoding="utf-8")
    app = make_app(index=False)
    settings = Settings(kb=make_app.kb_path, embed={"provider": "none"}, llm={"provider": "none"}, answer={"mode": "pipeline"})
    with KnowledgeBase(settings) as kb:
        kb.add([docs], "A")
        kb.add([finance], "B")
        kept = kb.ask("How long are backups kept?", collection="A")
        paid = kb.ask("When are invoices paid?", collection="B").run_id
        keys = {"reader": kb.keys.create("reader", [])[1], "reader of B": kb.keys.create("reader", ["B"])[1],
                "editor": kb.keys.create("editor", [])[1]}
        (docs / "ops.md").write_text((docs / "ops.md").read_text(encoding="utf-8").replace("35 days", "14 days"),
                                     encoding="utf-8")
        kb.add([docs], "A")  # the edit, as a watch or an upload would write it: through the store
    with TestClient(app, raise_server_exceptions=False) as client:
        def call(method, path, key="reader", **params):
            return client.request(method, f"/api/v1{path}", params=params, headers={"Authorization": f"Bearer {keys[key]}"})

        run = call("GET", f"/runs/{kept.run_id}").json()
        assert run["stale"] is True and run["stale_at"] and run["recheck"] is None
        (source,) = run["sources"]
        assert source["changed_at"] == run["stale_at"] and source["quote"] == "Backups are kept for 35 days."
        assert len(source["content_hash"]) >= 16 and source["document_id"] == kept.citations[0].document_id
        assert call("GET", f"/runs/{paid}").json()["stale"] is False
        assert [q["run_id"] for q in call("GET", "/log", "editor", stale="true").json()["questions"]] == [kept.run_id]
        assert [q["run_id"] for q in call("GET", "/log", "editor", stale="false").json()["questions"]] == [paid]
        (row,) = call("GET", "/log", "editor", kind="stale").json()["questions"]
        assert row["run_id"] == kept.run_id and row["attention"] == ["stale"]
        lines = [json.loads(x) for x in call("GET", "/log", "editor", format="jsonl").text.splitlines()]
        assert {x["run_id"]: x["stale"] for x in lines} == {kept.run_id: True, paid: False}
        session = call("GET", f"/sessions/{kept.session_id}").json()
        assert [r["stale"] for r in session["runs"]] == [True]

        assert_error(call("POST", f"/runs/{kept.run_id}/recheck", "reader of B"), 404, "not_found")
        r = call("POST", f"/runs/{kept.run_id}/recheck")
        assert r.status_code == 200, r.text
        checked = r.json()
        assert checked["verdict"] == "contradicted" and checked["run_id"] == kept.run_id
        source = checked["claims"][0]["sources"][0]
        assert source["old"] == "Backups are kept for 35 days." and source["new"] == "Backups are kept for 14 days."
        assert {"op": "delete", "text": " 35"} in source["diff"] and {"op": "insert", "text": " 14"} in source["diff"]
        assert call("GET", f"/runs/{kept.run_id}").json()["recheck"] == checked
        assert call("POST", f"/runs/{paid}/recheck", "reader of B").json()["verdict"] == "supported"
        assert_error(call("POST", "/runs/nosuchrun/recheck"), 404, "not_found")
