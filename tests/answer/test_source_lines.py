"""Source lines a reader can use: one per citation number, and a file name that says which file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

SSH = """OpenSSH for Debian
------------------

New installations set PermitRootLogin to prohibit-password, so root may log in with a key only.
Upgraded installations keep the setting they had, which was yes on older releases.
"""
GIT = """Git for Debian
--------------

The git-daemon-run package runs git daemon under runit; the repositories are served from /var/lib/git.
"""
OPS = """# Operations

The database is backed up every 6 hours to object storage. Backups are kept for 35 days and
restores are rehearsed every month.
"""


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("source_lines")
    for rel, text in {"openssh-client/README.Debian": SSH, "git/README.Debian": GIT, "ops/ops.md": OPS}.items():
        (root / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def kb(docs, local_embedder):
    # one hit a question: the other README.Debian is never among an answer's sources
    settings = Settings(kb=str(docs / "kb.db"), llm={"provider": "none"}, answer={"top_k": 1})
    with KnowledgeBase(settings, embedder=local_embedder) as base:
        report = base.add([docs / "docs"])
        assert len(report.added) == 3 and not report.failed
        yield base


def test_a_file_name_the_knowledge_base_holds_twice_is_labelled_with_its_folder(kb):
    answer = kb.ask("Which PermitRootLogin setting do new installations get?")
    assert answer.answerable and answer.citations
    assert all(c.label.startswith("[source: openssh-client/README.Debian") for c in answer.citations)
    unique = kb.ask("How long are backups kept?")
    assert unique.citations and unique.citations[0].label.startswith("[source: ops.md")  # no namesake: the name alone


def test_namesakes_stay_within_what_the_caller_may_see(kb, docs):
    paths = [str(docs / "docs" / "openssh-client" / "README.Debian")]
    assert kb.documents.namesakes(paths) == [str(docs / "docs" / "git" / "README.Debian")]
    assert kb.documents.namesakes(paths, collection="elsewhere") == []


def test_sources_list_one_line_per_citation_number(docs, kb):
    answer = kb.ask("How long are backups kept and how often is the database backed up?")
    numbers = [c.n for c in answer.citations]
    assert len(numbers) > len(set(numbers)), "the test needs an answer quoting one source twice"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_LLM__PROVIDER="none")
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(docs / "kb.db"), "ask", "--fresh",
                           "How long are backups kept and how often is the database backed up?"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.split("Sources", 1)[1].splitlines() if line.startswith(" [")]
    assert sorted(row.split("]")[0] for row in rows) == sorted({f" [{n}" for n in numbers})
