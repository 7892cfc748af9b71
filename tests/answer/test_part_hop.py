"""A later part of a question asks about what the earlier part's answer names (issue 28, item 4): "Which release
carries the fix for CVE-2023-29007, and what kind of attack did that bug allow?" — the first part's answer names
v2.30.9 ("merges the fixes that appear in v2.30.9 ..."), whose own notes say what the bug allowed; "靠的是什么文件？
这种文件存在时还有谁能登录？" — the first answer names /run/nologin, whose manual page says who may still log in.  Ranked
with the part before it, the later part quotes the earlier answer again; it is asked once more in the file that answer
names (docqa.answer.hop.part_link), and quotes what it says there, cited."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.access import Principal
from docqa.answer.hop import part_link, refers_back, said_again
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .test_hop import FIXES, SIBLINGS

NOLOGIN = "如果使用了 [TIME] 参数， 那么在关机流程开始前5分钟将会创建 /run/nologin 文件， 以禁止用户登录。"
MERGED = ("This release merges the fixes that appear in v2.30.9 to address the security issues CVE-2023-25652, "
          "CVE-2023-25815, and CVE-2023-29007; see the release notes for that version for details.")


@pytest.mark.parametrize(("question", "refers"), [
    ("what kind of attack did that bug allow?", True),
    ("这种文件存在时还有谁能登录？", True),
    ("该选项的默认值是多少？", True),
    ("Where does it keep its logs?", True),
    ("what kind of attack did CVE-2023-29007 allow?", False),
    ("普通用户应该怎么改密码？", False),  # 应该 is "should", not 该 "the said"
    ("哪个文件？", False),
])
def test_a_part_refers_back_by_a_demonstrative_or_pronoun(question, refers):
    assert refers_back(question) is refers


@pytest.mark.parametrize(("question", "earlier", "quoted", "entity", "query"), [
    ("what kind of attack did that bug allow?", "Which 2.39.x release carries the fix for CVE-2023-29007?", [MERGED],
     "v2.30.9", "2.30.9 CVE-2023-29007 what kind of attack did that bug allow?"),
    ("这种文件存在时还有谁能登录？", "靠的是什么文件？", [NOLOGIN], "/run/nologin", "/run/nologin 这种文件存在时还有谁能登录？"),
])
def test_the_entity_the_earlier_answer_names_is_what_the_later_part_asks_about(question, earlier, quoted, entity, query):
    link = part_link(question, earlier, quoted)
    assert link is not None and (link.entity, link.query) == (entity, query)


@pytest.mark.parametrize(("question", "earlier", "quoted", "files"), [
    # no reference back: the part asks about what it names itself
    ("what kind of attack did CVE-2023-29007 allow?", "Which release carries the fix?", [MERGED], []),
    # the entity the answer names is one the question names already: nothing to follow
    ("what did that release fix?", "Which release merges v2.30.9?", ["This release merges the fixes that appear in v2.30.9."], []),
    # an answer naming no version or path
    ("这种文件存在时还有谁能登录？", "靠的是什么文件？", ["将只允许root访问。"], []),
    # the heading of the file the earlier part quotes names where that answer is, not where it leads
    ("what kind of attack did that bug allow?", "Which 2.39.x release carries the fix for CVE-2023-29007?",
     ["Git v2.39.3 Release Notes"], ["/usr/share/doc/git/RelNotes/2.39.3.txt"]),
])
def test_no_link_without_a_reference_back_to_an_entity_of_another_file(question, earlier, quoted, files):
    assert part_link(question, earlier, quoted, files) is None


def test_the_link_skips_the_earlier_answers_own_file_for_the_file_it_leads_to():
    link = part_link("what kind of attack did that bug allow?", "Which 2.39.x release carries the fix for CVE-2023-29007?",
                     ["Git v2.39.3 Release Notes", MERGED], ["/doc/RelNotes/2.39.3.txt", "/doc/RelNotes/2.39.3.txt"])
    assert link is not None and link.entity == "v2.30.9"


def test_a_later_part_follows_only_when_its_own_pick_says_again_what_the_earlier_part_quotes():
    assert said_again([MERGED, "other"], [MERGED])
    assert said_again([MERGED.replace("v2.30.9 to", "v2.30.9 and v2.31.8 to")], [MERGED])  # a sibling's repeat
    assert said_again([], [MERGED])
    injection = "certain malicious configuration values may be misinterpreted, leading to arbitrary configuration injection."
    assert not said_again([injection, MERGED], [MERGED])


ASKED = "Which 2.31.x release carries the fix for CVE-2023-29007, and what kind of attack did that bug allow?"


@pytest.fixture
def notes_kb(tmp_path: Path, embedder):
    """Git's maintenance releases that merge v2.30.9's fixes in collection 'notes', 2.30.9's own notes in 'security'."""
    for folder, name, text in [("security", "2.30.9.txt", FIXES)] + [("notes", n, t) for n, t in SIBLINGS.items()]:
        (tmp_path / folder / "RelNotes").mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "RelNotes" / name).write_text(text, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.add([tmp_path / "notes"], "notes")
        kb.add([tmp_path / "security"], "security")
        yield kb


def test_the_later_part_is_answered_in_the_file_the_earlier_answer_names(notes_kb):
    answer = notes_kb.ask(ASKED)
    assert answer.mode == "extractive" and len(answer.retrieval.parts) == 2
    own = [c for c in answer.citations if Path(c.path).name == "2.30.9.txt"]
    assert own and "configuration injection" in " ".join(own[-1].quote.split())
    hops = [e for e in notes_kb.log.run(answer.run_id).trace if e.get("stage") == "part hop"]
    assert [(e["entity"], e["followed"]) for e in hops] == [("v2.30.9", True)]
    assert notes_kb.documents.text(own[-1].document_id)[own[-1].char_start : own[-1].char_end] == own[-1].quote
    assert {Path(c.path).name for c in answer.citations} - {"2.30.9.txt"}  # the earlier part's release cited too
    assert f"[{own[-1].n}]" in answer.answer


def test_the_part_hop_never_reaches_a_collection_the_asker_cannot_see(notes_kb):
    reader = Principal("reader", ("notes",), "k1", remote=True)
    for answer in (notes_kb.ask(ASKED, principal=reader), notes_kb.ask(ASKED, collection="notes")):
        assert "2.30.9.txt" not in {Path(c.path).name for c in answer.citations} and "injection" not in answer.answer
