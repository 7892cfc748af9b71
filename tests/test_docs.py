"""docs/architecture.md cannot drift from the code: its generated sections (the access actions, the MCP
tools, the schema migrations, the import rules) are what tools/architecture_doc.py makes of the code now,
and its prose states no other count of actions or tools, and no schema the migrations do not have."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import architecture_doc as doc  # noqa: E402  (tools/ is not a package)

FIX = "run 'python tools/architecture_doc.py' and commit docs/architecture.md"


def test_the_generated_sections_are_the_code_s():
    text = doc.PAGE.read_text(encoding="utf-8")
    assert doc.render(text) == text, f"docs/architecture.md is out of date: {FIX}"


def test_the_prose_states_the_code_s_counts():
    from docqa.access import ACTIONS

    stated = doc.stated_counts(doc.PAGE.read_text(encoding="utf-8"))
    assert stated["actions"] <= {len(ACTIONS)}, f"the page says {stated['actions']} actions; access.ACTIONS has {len(ACTIONS)}"
    tools = len(doc.tool_names())
    assert stated["tools"] <= {tools}, f"the page says {stated['tools']} tools; the MCP server has {tools}"
    versions = doc.schema_versions()
    numbers = {n for found in versions.values() for n, _ in found}
    assert stated["schema"] <= numbers, f"the page names schema {stated['schema'] - numbers}, which no migration has"
    newest = versions["SQLite"][-1][0]
    assert stated["current"] <= {newest}, f"a heading says schema {stated['current']}; the newest migration is {newest}"


def test_a_drifted_page_is_caught(tmp_path):
    text = doc.PAGE.read_text(encoding="utf-8")
    stale = re.sub(r"(<!-- generated: actions -->\n).*?(<!-- end: actions -->)", r"\g<1>5 actions: read, write\n\g<2>",
                   text, flags=re.S)
    assert doc.render(stale) == text  # regenerating repairs it
    assert doc.stated_counts("## Storage (SQLite, schema 5)\n\nan MCP server with five tools over schema 9 and 7 "
                             "access actions") == {"tools": {5}, "actions": {7}, "schema": {5, 9}, "current": {5}}
    with pytest.raises(SystemExit, match="no '<!-- generated: layers -->'"):
        doc.render(text.replace("<!-- generated: layers -->", ""))
