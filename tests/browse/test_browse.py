"""Browsing documents as text (list_docs, fetch_doc, grep_docs, llms-txt) over a real knowledge base."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docqa.errors import InputError, NotFoundError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from ingest.fixtures import make_pdf

LINE = re.compile(r"^- \[[^\]]+\]\([0-9a-f]{16}\)(: \S.*)?$")
LONG_LINES = 500


def _write(root: Path) -> None:
    files = {
        "ops/backup.md": "# Nightly backups\n\nEvery night a snapshot goes to glacier storage at 02:00 UTC.\n\n"
                         "## Restore\n\nRestores take about an hour. The backup is encrypted.\n",
        "ops/deploy.md": "# Deploying\n\nReleases go out every Tuesday afternoon after a careful review by two engineers of "
                         "the platform team, who read the change log together.\n\n"
                         + "".join(f"## Step {i}\n\nThe kubernetes rollout waits for kubernetes health checks "
                                   f"before kubernetes moves on (step {i}).\n\n" for i in range(1, 5)),
        "ops/index.md": "# Operations\n\nThe operations folder: backups and deploys.\n",
        "guide/index.md": "# Guide\n\nHow to read this guide.\n",
        "guide/intro.md": "# Introduction\n\nThis guide (draft version) explains the platform to new engineers.\n",
        "guide/zh/运维.md": "# 运维手册\n\n每天凌晨进行一次全量备份，备份保留 35 天。\n\n恢复演练每月一次。\n",
        "long.txt": "\n".join(f"line {i} alpha" for i in range(1, LONG_LINES + 1)) + "\n",
        "wide.txt": "\n".join(f"{i} " + "w" * 500 for i in range(1, 101)) + "\n",
        "huge-line.txt": "start\n" + "y" * 20_000 + "\nend\n",
        "slow.txt": "x" * 3_000 + "\n",
        "bad.pdf": "%PDF-1.4\nthis is not really a pdf\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    make_pdf(root / "manual.pdf", ["Manual first page\n\nIntroduction to the manual.",
                                   "Second page heading\n\nSecond page body about pumps.",
                                   "Third page heading\n\nThird page body about valves."])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[KnowledgeBase, Path]:
    base = tmp_path_factory.mktemp("browse")
    docs = base / "docs"
    _write(docs)
    kb = KnowledgeBase(Settings(kb=str(base / "kb.db"), embed={"provider": "none"}))
    report = kb.add([docs])
    assert len(report.failed) == 1  # bad.pdf
    yield kb, docs
    kb.close()


def _doc_id(kb: KnowledgeBase, docs: Path, rel: str) -> str:
    return kb.documents.get(docs / rel).document_id


# -- list_docs ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_list_docs_lines_are_llms_txt_style_and_ordered_by_path(corpus):
    kb, docs = corpus
    page = kb.browse.list_docs()
    assert page.total == 11 and page.page == page.pages == 1  # bad.pdf failed: not listed
    assert all(LINE.match(line) for line in page.lines), page.lines
    backup = _doc_id(kb, docs, "ops/backup.md")
    assert f"- [ops / Nightly backups]({backup}): Every night a snapshot goes to glacier" in page.render()
    assert any(line.startswith("- [guide / zh / 运维手册](") for line in page.lines)
    assert any(line.startswith("- [long.txt](") for line in page.lines)  # top level: no folders, file name as title
    ids = [re.search(r"\]\(([0-9a-f]{16})\)", line).group(1) for line in page.lines]
    paths = [kb.store.documents.document_record(i).path for i in ids]
    assert paths == sorted(paths)
    assert "showing all 11 documents" in page.note and "1 document failed to ingest" in page.note


def test_summaries_are_trimmed(corpus):
    kb, _ = corpus
    assert all(len(line.split("): ", 1)[-1]) <= 161 for line in kb.browse.list_docs().lines)
    wide = kb.browse.list_docs(grep="wide.txt").lines[0]
    assert wide.endswith("…") and len(wide.split("): ", 1)[1]) <= 161


def test_grep_filters_over_title_summary_keywords_and_path(corpus):
    kb, docs = corpus
    deploy = kb.documents.get(docs / "ops/deploy.md")
    assert "kubernetes" in deploy.keywords and "kubernetes" not in deploy.summary.lower()
    assert [deploy.document_id in line for line in kb.browse.list_docs(grep="KUBERNETES").lines] == [True]  # keywords
    assert len(kb.browse.list_docs(grep="glacier").lines) == 1  # summary
    assert len(kb.browse.list_docs(grep="nightly").lines) == 1  # title
    assert len(kb.browse.list_docs(grep="^guide/").lines) == 3  # path (relative to the common root), a regex
    assert len(kb.browse.list_docs(grep="back(up|ups)").lines) == 2  # backup.md and ops/index.md
    draft = kb.browse.list_docs(grep="(draft")  # not a valid regex: plain text
    assert draft.total == 1 and "Introduction" in draft.lines[0]
    none = kb.browse.list_docs(grep="no-such-thing")
    assert none.lines == [] and none.total == 0 and "grep_docs" in none.note


def test_paging_and_note(corpus):
    kb, _ = corpus
    first = kb.browse.list_docs(page_size=4)
    assert (first.page, first.pages, first.total, len(first.lines)) == (1, 3, 11, 4)
    assert "showing 1–4 of 11 documents; call list_docs with page=2 for more" in first.note
    last = kb.browse.list_docs(page=3, page_size=4)
    assert len(last.lines) == 3 and "showing 9–11 of 11 documents (last page)" in last.note
    assert not set(first.lines) & set(last.lines)
    past = kb.browse.list_docs(page=9, page_size=4)
    assert past.lines == [] and "past the end" in past.note and "page=3" in past.note
    grepped = kb.browse.list_docs(grep="ops", page_size=2)
    assert "matching grep 'ops'" in grepped.note and "page=2 and the same grep" in grepped.note
    with pytest.raises(InputError):
        kb.browse.list_docs(page=0)
    json.dumps(first.to_dict())
    assert first.render().endswith(first.note) and first.render().startswith(first.lines[0])


# -- fetch_doc ---------------------------------------------------------------------------------
def test_fetch_doc_numbers_lines_and_pages_by_offset_and_limit(corpus):
    kb, docs = corpus
    doc_id = _doc_id(kb, docs, "long.txt")
    first = kb.browse.fetch_doc(doc_id)
    rows = first.text.split("\n")
    assert len(rows) == 200 and rows[0] == "   1| line 1 alpha" and rows[-1] == " 200| line 200 alpha"
    assert (first.line_start, first.line_end, first.total_lines) == (1, 200, LONG_LINES)
    assert first.note == "lines 1–200 of 500; call fetch_doc with offset=201 for more"
    tail = kb.browse.fetch_doc(doc_id, offset=450, limit=100)
    assert (tail.line_start, tail.line_end) == (450, 500) and tail.text.startswith(" 450| line 450 alpha")
    assert tail.note == "lines 450–500 of 500 (end of document)"
    past = kb.browse.fetch_doc(doc_id, offset=900)
    assert past.line_end < past.line_start and past.text == "" and "past the end" in past.note
    assert tail.render().startswith("long.txt · ") and tail.render().endswith(tail.note)
    json.dumps(tail.to_dict())
    with pytest.raises(InputError):
        kb.browse.fetch_doc(doc_id, offset=0)


def test_fetch_doc_caps_characters_at_a_line_boundary(corpus):
    kb, docs = corpus
    wide = kb.browse.fetch_doc(_doc_id(kb, docs, "wide.txt"), limit=100)
    assert len(wide.text) <= 12_000 and wide.line_end < 100
    assert wide.text.split("\n")[-1].startswith(f"{wide.line_end:>4}| {wide.line_end} www")
    assert f"cut at 12,000 characters); call fetch_doc with offset={wide.line_end + 1} for more" in wide.note
    huge = kb.browse.fetch_doc(_doc_id(kb, docs, "huge-line.txt"), offset=2)
    assert huge.line_end == 2 and len(huge.text) < 12_100 and "more characters]" in huge.text
    assert "offset=3" in huge.note


def test_fetch_doc_marks_pdf_pages(corpus):
    kb, docs = corpus
    doc_id = _doc_id(kb, docs, "manual.pdf")
    text = kb.browse.fetch_doc(doc_id).text
    markers = re.findall(r"^--- page (\d+) ---$", text, re.M)
    assert markers == ["1", "2", "3"]
    rows = text.split("\n")
    assert "Second page heading" in rows[rows.index("--- page 2 ---") + 1]
    assert "Third page heading" in rows[rows.index("--- page 3 ---") + 1]
    body = next(int(r.split("|")[0]) for r in rows if "pumps" in r)
    continued = kb.browse.fetch_doc(doc_id, offset=body, limit=1).text.split("\n")
    assert continued[0] == "--- page 2 (continued) ---" and "pumps" in continued[1]


def test_fetch_doc_accepts_paths(corpus):
    kb, docs = corpus
    backup = _doc_id(kb, docs, "ops/backup.md")
    assert kb.browse.fetch_doc("ops/backup.md").doc_id == backup
    assert kb.browse.fetch_doc("backup.md").doc_id == backup
    assert kb.browse.fetch_doc(str(docs / "ops/backup.md")).doc_id == backup
    assert kb.browse.fetch_doc(f"({backup})").doc_id == backup  # copied with the catalog's parentheses
    with pytest.raises(InputError, match="matches 2 documents"):
        kb.browse.fetch_doc("index.md")
    assert kb.browse.fetch_doc("guide/index.md").title == "Guide"
    with pytest.raises(NotFoundError, match="list_docs"):
        kb.browse.fetch_doc("nope-0000")
    with pytest.raises(NotFoundError, match="list_docs"):
        kb.browse.fetch_doc(_doc_id(kb, docs, "bad.pdf"))  # failed: no stored text


# -- grep_docs ---------------------------------------------------------------------------------
def test_grep_docs_shows_matches_with_context_like_ripgrep(corpus):
    kb, _ = corpus
    result = kb.browse.grep_docs(r"encrypted|glacier", context=1)
    assert (result.total, result.documents, result.complete) == (2, 1, True)
    rendered = result.render()
    assert "ops/backup.md:3: Every night a snapshot goes to glacier storage at 02:00 UTC." in rendered
    assert "ops/backup.md-2-" in rendered and "ops/backup.md-4-" in rendered
    assert "ops/backup.md:7: Restores take about an hour. The backup is encrypted." in rendered
    assert "ops/backup.md-4-\n--\nops/backup.md-6-" in rendered  # separate runs, as rg shows them
    assert "\n--\n" not in kb.browse.grep_docs(r"encrypted|glacier", context=2).render()  # 1-5 and 5-9 join
    lines = result.files[0].lines
    assert [ln.line for ln in lines if ln.match] == [3, 7]
    assert result.note.startswith("2 matching lines in 1 document")
    json.dumps(result.to_dict())


def test_grep_docs_path_glob_case_and_chinese(corpus):
    kb, _ = corpus
    everywhere = kb.browse.grep_docs("kubernetes|backup")
    only_ops = kb.browse.grep_docs("kubernetes|backup", path_glob="ops/*")
    assert {f.path for f in only_ops.files} == {"ops/backup.md", "ops/deploy.md", "ops/index.md"}
    assert {f.path for f in everywhere.files} > {f.path for f in only_ops.files} or everywhere.total >= only_ops.total
    assert kb.browse.grep_docs("kubernetes", path_glob="guide/**").total == 0
    assert kb.browse.grep_docs("NIGHTLY").total == 1 and kb.browse.grep_docs("NIGHTLY", ignore_case=False).total == 0
    chinese = kb.browse.grep_docs("备份")
    assert chinese.total == 1 and chinese.files[0].path == "guide/zh/运维.md"
    assert "guide/zh/运维.md:3: 每天凌晨进行一次全量备份" in chinese.render()


def test_grep_docs_caps_matches_and_says_how_many_more(corpus):
    kb, _ = corpus
    result = kb.browse.grep_docs(r"^line \d+ alpha$", context=0, max_matches=5)
    assert result.shown == 5 and result.total == LONG_LINES
    assert [ln.line for ln in result.files[0].lines] == [1, 2, 3, 4, 5]
    assert "showing the first 5, 495 more" in result.note and "path_glob" in result.note


@pytest.mark.slow
def test_grep_docs_errors_and_guards(corpus):
    kb, _ = corpus
    with pytest.raises(InputError, match="missing \\)"):
        kb.browse.grep_docs("backup(")
    with pytest.raises(InputError):
        kb.browse.grep_docs("")
    assert kb.browse.grep_docs("y{100}").total == 0 and "1 line longer than 10,000 characters skipped" in kb.browse.grep_docs("y{100}").note
    started = time.monotonic()
    slow = kb.browse.grep_docs(r"(x+x+)+y")  # catastrophic backtracking on slow.txt
    assert time.monotonic() - started < 3.5
    assert not slow.complete and "given up on" in slow.note
    across = kb.browse.grep_docs(r"alpha\s+line")  # would match across a line break: never, as in ripgrep
    assert across.total == 0


# -- llms-txt ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_llms_txt_command(corpus, tmp_path):
    kb, docs = corpus
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")} | {"DOCQA_EMBED__PROVIDER": "none"}
    cmd = [sys.executable, "-m", "docqa", "--kb", kb.settings.kb, "llms-txt"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("# default\n\n> 11 documents; 1 more failed to ingest\n")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings == [".", "guide", "guide/zh", "ops"]
    ops = text.split("## ops\n", 1)[1]
    backup = _doc_id(kb, docs, "ops/backup.md")
    assert f"- [Nightly backups]({backup}): Every night a snapshot" in ops
    assert re.search(r"^- \[Deploying\]\([0-9a-f]{16}\): .*\(keywords: [^)]*kubernetes", ops, re.M)
    assert text == kb.browse.llms_txt()
    out = tmp_path / "llms.txt"
    proc = subprocess.run([*cmd, "--collection", "default", "--output", str(out)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0 and out.read_text(encoding="utf-8") == text and proc.stdout == ""


def test_collections_are_listed_apart(tmp_path):
    for name, text in (("a/one.md", "# One\n\nThe first collection's only page about turbines.\n"),
                       ("b/two.md", "# Two\n\nThe second collection's page about turbines and gears.\n")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"})) as kb:
        kb.add([tmp_path / "a"], collection="first")
        kb.add([tmp_path / "b"], collection="second")
        assert kb.browse.list_docs().total == 2 and kb.browse.list_docs(grep="turbines").total == 2
        only = kb.browse.list_docs(collection="second")
        assert only.total == 1 and only.lines[0].startswith("- [Two](")  # root: the collection's own folder
        assert kb.browse.list_docs(grep="gears", collection="first").total == 0
        assert kb.browse.grep_docs("turbines", collection="first").files[0].path == "one.md"
        assert kb.browse.llms_txt().startswith("# all collections (first, second)\n\n> 2 documents\n")
        assert kb.browse.llms_txt("first").startswith("# first\n\n> 1 document\n\n## .\n\n- [One](")
