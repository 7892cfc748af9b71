"""Entailment (docqa.answer.entail) through the checker's entry point (docqa.answer.verify, the code
the pipeline runs): a claim must be what its cited span says in context — the case it speaks of,
the value it pairs with a subject, negation, numbers, versions, CVE and licence ids — not merely
share its strings.  Table-driven over real-looking spans; each table has right claims that must
still pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm.scripted_server import ScriptedServer

from docqa.answer.checker import check_facts
from docqa.answer.citer import cite
from docqa.answer.entail import comparison_problem
from docqa.answer.verify import verify
from docqa.kb import KnowledgeBase
from docqa.llm import OpenAICompatModel
from docqa.settings import Settings

from .hits import hit_in, sources

# Lines 1-45 of openssh's README.Debian (Debian's debian/* files, BSD-2-clause: see the .copyright file beside it)
README = (Path(__file__).parent / "data" / "openssh-README.Debian").read_text(encoding="utf-8")
NEW = "What is the default PermitRootLogin setting for new OpenSSH installations on Debian?"


@pytest.mark.parametrize("claim, ok, why", [
    # the user's case (issue 28): "yes" is quoted from the lines about upgraded installations
    ('The default PermitRootLogin setting for new OpenSSH installations on Debian is "yes" [1].', False,
     "new installations"),
    ('New installations use "PermitRootLogin yes" [1].', False, "new installations"),
    ('The default PermitRootLogin setting for new OpenSSH installations on Debian is "prohibit-password" [1].', True, None),
    ('New installations are set to "PermitRootLogin without-password" [1].', True, None),
    ('Installations upgraded from before 1:6.6p1-1 still use "PermitRootLogin yes" [1].', True, None),
    ('"PermitRootLogin no" will break setups that SSH to root with a forced command [1].', True, None),
    ('"PermitRootLogin no" will not break setups that SSH to root with a forced command [1].', False, "negation"),
    ('New installations are set to "PermitRootLogin without-password" as of 1:6.6p1-1 [1].', True, None),
    ('New installations are set to "PermitRootLogin without-password" as of 1:6.7p1-1 [1].', False, "6.7p"),
])
def test_openssh_readme(claim, ok, why):
    result = verify(NEW, claim, README, title="README.Debian")
    assert result.verified is ok, result.reasons
    if why:
        assert any(why in r for r in result.reasons), result.reasons


LIBTASN1 = """Libtasn1 is a library for Abstract Syntax Notation One (ASN.1) and Distinguished Encoding Rules (DER).
The library is distributed under the GNU Lesser General Public License, LGPL-2.1+; the tools, the tests and
the examples are under the GNU General Public License, GPL-3+.
This version doesn't handle the REAL type.  It does not support the extended UTCTime and GeneralizedTime forms either.
Version 4.19.0 fixes CVE-2021-46848, an off-by-one in asn1_encode_simple_der (reported in 2021).
The parser keeps at most 64 levels of nested structures and reads files of up to 10 MB."""


@pytest.mark.parametrize("question, claim, ok, why", [
    ("libtasn1 使用什么许可证？", "libtasn1 使用 GPL-2.1+ 许可证 [1]。", False, "licence"),
    ("Which licence does libtasn1 use?", "The library is distributed under LGPL-2.1+ [1].", True, None),
    ("Which licence does libtasn1 use?", "The library is under the LGPLv2.1 or later [1].", True, None),
    ("Which licence do the libtasn1 tools use?", "The tools are under the GPL-3+ [1].", True, None),
    ("Which licence do the libtasn1 tools use?", "The tools are under the Apache-2.0 licence [1].", False, "licence"),
    ("Which CVE does libtasn1 4.19.0 fix?", "Version 4.19.0 fixes CVE-2021-46848 [1].", True, None),
    ("Which CVE does libtasn1 4.19.0 fix?", "Version 4.19.0 fixes CVE-2022-2509 [1].", False, "cve"),
    ("Which CVE does libtasn1 4.19.0 fix?", "Version 4.18.0 fixes CVE-2021-46848 [1].", False, "version"),
    ("Which ASN.1 types does libtasn1 not handle?", "This version doesn't handle the REAL type [1].", True, None),
    ("Does libtasn1 handle the REAL type?", "This version of libtasn1 handles the REAL type [1].", False, "negation"),
    ("How deep can nested structures be?", "The parser keeps at most 64 levels of nested structures [1].", True, None),
    ("How deep can nested structures be?", "The parser keeps at least 64 levels of nested structures [1].", False,
     "the other case"),
    ("How large may files be?", "The parser reads files of up to 10 MB [1].", True, None),
    ("How large may files be?", "The parser reads files of up to 64 MB [1].", False, "64"),
    ("How deep can nested structures be?", "The parser keeps at most 64 levels, written by Simon Josefsson [1].", False,
     "does not say"),
])
def test_licences_cves_negation_and_numbers(question, claim, ok, why):
    result = verify(question, claim, LIBTASN1, title="libtasn1 manual")
    assert result.verified is ok, result.reasons
    if why:
        assert any(why in r for r in result.reasons), result.reasons


RELEASES = """Debian 11 "bullseye" was released on 14 August 2021, with Linux 5.10.
Debian 12 "bookworm" followed on 10 June 2023, with Linux 6.1."""


@pytest.mark.parametrize("claim, ok", [
    ("Bullseye [1].", True),
    ("Bullseye was released first [1].", True),
    ("Bookworm was released first [1].", False),
    ("Bookworm came out before Bullseye [1].", False),
])
def test_which_came_first_follows_the_years(claim, ok):
    question = "Which was released first, Bullseye or Bookworm?"
    assert (comparison_problem(claim, question, RELEASES) is None) is ok
    assert verify(question, claim, RELEASES).verified is ok


@pytest.mark.parametrize("question, claim, ok", [
    ("Which Linux version does bookworm come with?", "Debian 12 bookworm followed with Linux 6.1 [1].", True),
    ("Which Linux version does bookworm come with?", "Debian 12 bookworm followed with Linux 5.10 [1].", False),  # bullseye's
    ("Which Linux version does bookworm come with?", "Debian 12 bookworm ships Linux 6.1 [1].", False),  # "ships": not said
    ("When was bookworm released?", "Bookworm was released on 10 June 2023 [1].", True),
    ("When was bookworm released?", "Bookworm followed on 14 August 2021 [1].", False),  # bullseye's date
])
def test_a_value_paired_with_another_subject(question, claim, ok):
    assert verify(question, claim, RELEASES).verified is ok


def test_a_chinese_claim_over_an_english_span(local_embedder):
    """Across languages the words cannot be compared: the embedder supports the claim, its
    language-neutral tokens must be in the span, and the qualifier table is bilingual."""
    question = "Debian 上新安装的 OpenSSH 默认的 PermitRootLogin 设置是什么？"
    embed = local_embedder.embed_batch
    wrong = verify(question, 'Debian 新安装的 OpenSSH 默认 PermitRootLogin 为 "yes" [1]。', README, embed=embed)
    assert not wrong.verified and any("new installations" in r for r in wrong.reasons), wrong.reasons
    right = verify(question, '新安装的系统默认设置为 "PermitRootLogin prohibit-password" [1]。', README, embed=embed)
    assert right.verified, right.reasons
    invented = verify(question, '新安装的系统默认设置为 "PermitRootLogin never" [1]。', README, embed=embed)
    assert not invented.verified


@pytest.mark.parametrize("answer, ok", [
    ("Delhi", True),  # a short extractive answer
    ("The Oberoi Group has its head office in Delhi.", True),
    ("The Oberoi Group's head office is in Mumbai.", False),  # a name the passage does not have
    ("The Oberoi Group is a notorious hotel company.", False),  # a word it does not say
    ("yes", True),  # a bare yes adds no fact: the question's statement is checked
])
def test_short_and_extractive_answers_still_pass(answer, ok):
    passage = ("The Oberoi family is an Indian family that is famous for its involvement in hotels, namely through "
               "The Oberoi Group. The Oberoi Group is a hotel company with its head office in Delhi.")
    question = ("Is the Oberoi Group a hotel company?" if answer == "yes"
                else "The Oberoi family is part of a hotel company that has a head office in what city?")
    assert verify(question, answer, passage).verified is ok


def test_check_facts_without_a_question_is_the_old_check():
    """The pipeline passes the question; without one only the facts are checked (strings)."""
    src = sources(hit_in(README, 0, len(README), path="/usr/share/doc/openssh-client/README.Debian"))
    cited = cite('New installations use "PermitRootLogin yes" [1].', src)
    assert check_facts(cited, src) == []
    cited = cite('New installations use "PermitRootLogin yes" [1].', src)
    assert check_facts(cited, src, NEW) and not cited.claims[0].supported


@pytest.mark.parametrize("answer", ["NOT_FOUND", "**NOT_FOUND**", "The default is NOT_FOUND [1].", "NOT FOUND."])
def test_the_not_found_token_is_never_a_claim(answer):
    """The answer prompt's token is an instruction's word, not something to publish (issue 28: a bare
    NOT_FOUND was printed)."""
    src = sources(hit_in(README, 0, len(README)))
    assert cite(answer, src).claims == []


def test_the_pipeline_never_calls_the_wrong_default_verified(tmp_path, local_embedder):
    """The user's case end to end (issue 28): a real knowledge base over the README, the model (a
    scripted server on loopback) answers "yes" for new installations in every round; the published
    answer is not that claim marked verified."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.Debian").write_text(README, encoding="utf-8")
    wrong = 'The default PermitRootLogin setting for new OpenSSH installations on Debian is "yes" [1].'
    with ScriptedServer([{"text": wrong}, {"text": "VERIFIED"}] * 4) as server:
        settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "openai", "base_url": server.base_url,
                                                              "timeout": 3, "max_retries": 0})
        model = OpenAICompatModel(server.base_url, "scripted", timeout=3, max_retries=0)
        with KnowledgeBase(settings, embedder=local_embedder, chat_model=model) as kb:
            kb.add([tmp_path / "docs"])
            answer = kb.ask(NEW)
    published_wrong = '"yes"' in answer.answer and "new" in answer.answer.lower() and answer.mode == "pipeline"
    assert not (published_wrong and answer.verification.status == "VERIFIED"), (answer.answer, answer.verification)
    assert answer.mode == "extractive" and any("not published" in n for n in answer.notes), answer.notes
    assert answer.answer.index("without-password") < answer.answer.index('"PermitRootLogin yes"')  # new ones first


@pytest.mark.parametrize("reply, ok", [("VERIFIED", True), ("REJECTED", False), ("NOT VERIFIED", False), ("Hmm.", True)])
def test_the_model_judges_each_claim_against_its_passage(reply, ok):
    """With a model, a claim the deterministic checks pass is put to it with its passage (one short
    prompt, one word back); an undecided reply leaves the deterministic verdict."""
    with ScriptedServer([{"text": reply}]) as server:
        model = OpenAICompatModel(server.base_url, "scripted", timeout=3, max_retries=0)
        result = verify(NEW, 'New installations are set to "PermitRootLogin without-password" [1].', README, model=model)
        sent = server.requests[0]["messages"][-1]["content"] if server.requests else ""
    assert result.verified is ok
    assert "PermitRootLogin without-password" in sent and NEW in sent
    if not ok:
        assert [r.by for r in result.rejections] == ["llm"]
