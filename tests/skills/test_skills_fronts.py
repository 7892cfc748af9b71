"""Skills at every door: `docqa skills list | show | lint` as real subprocesses, GET /api/v1/skills
(in process, and refused without a key where keys are needed), and the MCP tool list_skills."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from docqa.api import create_app
from docqa.kb import KnowledgeBase
from docqa.mcp import build_server
from docqa.skills.catalog import BUILTIN as BUILTIN_DIR
from docqa.settings import Settings

BUILTIN = {"compare-versions", "summarise-collection", "find-mentions", "answer-from-table", "write-procedure"}
OWN = """---
name: release-notes
description: Write release notes from the changelog.
---
## Workflow
grep_docs for the version.
## Required evidence
The changelog entry [n].
## Stop conditions
The version's entries are read.
## Report rules
One bullet per change.
"""


def docqa(kb: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=env, timeout=120)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def kb_dir(tmp_path) -> Path:
    own = tmp_path / "skills" / "release-notes"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text(OWN, encoding="utf-8")
    (own / "examples").mkdir()
    (own / "examples" / "v2.md").write_text("- Faster search [1].\n", encoding="utf-8")
    broken = tmp_path / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\ndescription: x\n---\n## Workflow\nonly this\n", encoding="utf-8")
    return tmp_path


@pytest.mark.slow
def test_cli_list_show_and_lint(kb_dir):
    kb = kb_dir / "kb.db"
    listed = json.loads(docqa(kb, "skills", "list", "--json").stdout)
    names = {s["name"]: s for s in listed["skills"]}
    assert BUILTIN | {"release-notes"} == set(names) and names["release-notes"]["origin"] == "knowledge base"
    assert names["release-notes"]["resources"] == ["examples/v2.md"]
    assert any(p.startswith(f"{kb_dir / 'skills' / 'broken' / 'SKILL.md'}:") for p in listed["problems"])
    table = docqa(kb, "skills", "list")
    assert "release-notes" in table.stdout and "left out" in table.stderr and "broken" in table.stderr
    shown = docqa(kb, "skills", "show", "release-notes")
    assert "Write release notes from the changelog." in shown.stdout and "## Report rules" in shown.stdout
    assert "examples/v2.md" in shown.stdout
    assert json.loads(docqa(kb, "skills", "show", "write-procedure", "--json").stdout)["body"].startswith("## Workflow")
    missing = docqa(kb, "skills", "show", "nope", ok=False)
    assert missing.returncode == 1 and "no skill named 'nope'" in missing.stderr and "release-notes" in missing.stderr
    good = docqa(kb, "skills", "lint", str(kb_dir / "skills" / "release-notes"))
    assert "ok release-notes" in good.stdout
    bad = docqa(kb, "skills", "lint", str(kb_dir / "skills"), ok=False)
    where = f"{kb_dir / 'skills' / 'broken' / 'SKILL.md'}:"
    assert bad.returncode == 1 and where + "6: section 'Required evidence' is missing" in bad.stderr
    assert "ok release-notes" in bad.stdout
    found = json.loads(docqa(kb, "skills", "lint", str(kb_dir / "skills" / "broken"), "--json", ok=False).stdout)
    assert {(p["line"], p["message"].split(":")[0]) for p in found["problems"]} >= {
        (6, "section 'Stop conditions' is missing")}


@pytest.mark.slow
def test_api_lists_and_shows_skills_and_needs_a_key_where_keys_are_on(kb_dir):
    settings = Settings(kb=str(kb_dir / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        api={"allowed_hosts": ["testserver"]})
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        listed = client.get("/api/v1/skills").json()
        assert BUILTIN | {"release-notes"} == {s["name"] for s in listed["skills"]}
        assert len(listed["problems"]) == 3
        assert all(p.startswith("knowledge base: broken/SKILL.md:6:") for p in listed["problems"])
        shown = {s["name"]: s["path"] for s in listed["skills"]}
        assert shown["release-notes"] == "release-notes/SKILL.md" and shown["compare-versions"] == "compare-versions/SKILL.md"
        one_own = client.get("/api/v1/skills/release-notes")
        assert one_own.json()["path"] == "release-notes/SKILL.md"
        for text in (client.get("/api/v1/skills").text, one_own.text):  # no absolute path: not the kb's folder,
            assert str(kb_dir) not in text and str(BUILTIN_DIR) not in text  # not docqa's install folder
        one = client.get("/api/v1/skills/compare-versions").json()
        assert one["origin"] == "builtin" and "## Required evidence" in one["body"] and one["triggers"]
        missing = client.get("/api/v1/skills/nope")
        assert missing.status_code == 404 and missing.json()["error"]["code"]
        assert "/api/v1/skills" in client.get("/openapi.json").json()["paths"]
    with KnowledgeBase(settings) as kb:
        _, key = kb.keys.create("reader", ["ops"])  # a scoped reader
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert client.get("/api/v1/skills").status_code == 401
        answer = client.get("/api/v1/skills", headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200 and answer.json()["skills"] and str(kb_dir) not in answer.text


def test_mcp_list_skills(kb_dir):
    settings = Settings(kb=str(kb_dir / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})

    async def listed():
        with KnowledgeBase(settings) as kb:
            async with Client(build_server(kb)) as client:
                return await client.call_tool("list_skills", {})

    result = anyio.run(listed)
    assert not result.is_error
    names = {s["name"] for s in result.structured_content["skills"]}
    assert BUILTIN | {"release-notes"} == names
    assert all("path" not in s for s in result.structured_content["skills"])  # no server paths to MCP clients
    problems = result.structured_content["problems"]
    assert problems and all(p.startswith("knowledge base: broken/SKILL.md:") for p in problems)
    assert str(kb_dir) not in str(result.structured_content)
