"""POST /api/v1/runs/{id}/correction: editors of the run's collection write a correction, indexed at
once and flagged in the log; readers and editors of another collection are refused."""

from __future__ import annotations

import pytest

from api.test_editor_api import world  # noqa: F401  (the fixture: collections A and B, runs, keys)
from api.test_errors import assert_error


@pytest.mark.slow
def test_an_editor_corrects_a_logged_answer(world):  # noqa: F811
    client, get, keys, runs = world

    def post(run, key, text="Backups contracts are signed by the CFO."):
        return client.post(f"/api/v1/runs/{run}/correction", json={"text": text},
                           headers={"Authorization": f"Bearer {keys[key]}"})

    assert_error(post(runs["missing"], "reader"), 403, "forbidden")
    assert_error(post(runs["paid"], "editor of A"), 404, "not_found")  # a run of B does not exist for it
    assert post(runs["missing"], "editor", text="   ").status_code == 422
    r = post(runs["missing"], "editor of A")
    assert r.status_code == 201, r.text
    doc = r.json()
    assert doc["collection"] == "A" and doc["path"].endswith(f"correction-{runs['missing']}.md")
    rows = get("/log", attention="true").json()["questions"]
    assert next(q for q in rows if q["run_id"] == runs["missing"])["corrected"] is True
    listed = get("/documents", q=f"correction-{runs['missing']}").json()["documents"]  # indexed at once
    assert [d["path"] for d in listed] == [doc["path"]] and listed[0]["chunks"] >= 1
