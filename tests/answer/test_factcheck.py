"""Fact-checking any text against the knowledge base (docqa.answer.factcheck through `kb.verify`): real
SQLite, real files, BM25 plus the hash embedder; the scripted chat model is the one fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.access import Principal
from docqa.answer.factcheck import CONTRADICTED, NOT_FOUND, SUPPORTED, claim_names, claims_of, overall
from docqa.errors import InputError, LLMError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
ZH = """# 运维手册

## 备份

数据库每 6 小时备份一次，备份保留 35 天。

## 告警

磁盘使用率超过 85% 时发送告警。
"""
HR = "# Leave\n\nEmployees get 25 days of paid leave a year.\n"


@pytest.fixture
def make_kb(tmp_path: Path, embedder):
    """make_kb(model=None, **answer): a knowledge base with ops.md and 运维.md (collection 'ops') and hr.md ('hr')."""
    for folder, name, text in (("ops", "ops.md", OPS), ("ops", "运维.md", ZH), ("hr", "hr.md", HR)):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    opened: list[KnowledgeBase] = []

    def make(model: ScriptedChat | None = None, **answer) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), answer=answer, llm={"provider": "none"})
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
        if not opened:
            kb.add([tmp_path / "ops"], "ops")
            kb.add([tmp_path / "hr"], "hr")
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


def _quoted(kb: KnowledgeBase, citation) -> str:
    return kb.documents.text(citation.document_id)[citation.char_start:citation.char_end]


def test_each_claim_is_supported_with_the_exact_span_it_rests_on(make_kb):
    kb = make_kb()
    result = kb.verify("Backups are kept for 35 days. API keys are rotated every 90 days.")
    assert result.verdict == SUPPORTED and result.supported
    assert [c.verdict for c in result.claims] == [SUPPORTED, SUPPORTED]
    first, second = (c.citation for c in result.claims)
    assert first.quote == "Backups are kept for 35 days." and _quoted(kb, first) == first.quote
    assert first.path.endswith("ops.md") and first.line_start == 6
    assert "acmectl keys rotate" in second.quote and _quoted(kb, second) == second.quote
    assert result.checker == "deterministic" and result.to_dict()["claims"][0]["citation"]["quote"] == first.quote


@pytest.mark.parametrize("text, said, reason", [
    ("Backups are kept for 30 days.", "Backups are kept for 35 days.", "the passage gives 35, not 30"),
    ("The database is backed up every 12 hours.", "every 6 hours", "the passage gives 6, not 12"),
    ("The database is not backed up to object storage.", "backed up every 6 hours", "the opposite (a negation)"),
    ("备份保留 30 天。", "备份保留 35 天", "the passage gives 35, not 30"),  # the value with the same unit, not 6 小时
    ("磁盘使用率超过 90% 时发送告警。", "85%", "the passage gives 85%, not 90%"),
])
def test_a_claim_the_documents_state_otherwise_is_contradicted_with_the_span_that_says_so(make_kb, text, said, reason):
    kb = make_kb()
    result = kb.verify(text)
    (claim,) = result.claims
    assert (result.verdict, claim.verdict) == (CONTRADICTED, CONTRADICTED)
    assert said in claim.citation.quote and _quoted(kb, claim.citation) == claim.citation.quote
    assert any(reason in r for r in claim.reasons), claim.reasons


README = (Path(__file__).parent / "data" / "openssh-README.Debian").read_text(encoding="utf-8")  # see test_entail.py
NEW = "What is the default PermitRootLogin setting for new OpenSSH installations on Debian?"


@pytest.mark.parametrize("text, verdict, said", [
    # issue 28's case: "yes" is quoted from the lines about upgraded installations; the span that says otherwise
    ('The default PermitRootLogin setting for new OpenSSH installations on Debian is "yes".', CONTRADICTED,
     "new installations will be set to"),
    ('New installations use "PermitRootLogin yes".', CONTRADICTED, "new installations will be set to"),
    ('New installations are set to "PermitRootLogin without-password".', SUPPORTED, "new installations will be set to"),
    ('Installations upgraded from before 1:6.6p1-1 still use "PermitRootLogin yes".', SUPPORTED, None),
    ('"PermitRootLogin no" will not break setups that SSH to root with a forced command.', CONTRADICTED, None),
])
def test_the_pipelines_entailment_cases_through_verify(tmp_path: Path, embedder, text, verdict, said):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.Debian").write_text(README, encoding="utf-8")
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}), embedder=embedder) as kb:
        kb.add([tmp_path / "docs"])
        (claim,) = kb.verify(text, question=NEW).claims
        assert claim.verdict == verdict, claim.reasons
        if said:
            assert said in " ".join(claim.citation.quote.split()) and _quoted(kb, claim.citation) == claim.citation.quote


def test_a_claim_no_document_states_is_not_found_without_a_citation(make_kb):
    result = make_kb().verify("Backups are encrypted with AES-256 before they leave the host.")
    (claim,) = result.claims
    assert (result.verdict, claim.verdict, claim.citation) == (NOT_FOUND, NOT_FOUND, None)
    assert claim.reasons and result.to_dict()["claims"][0]["citation"] is None


def test_the_overall_verdict_is_the_worst_claims(make_kb):
    kb = make_kb()
    mixed = kb.verify("Backups are kept for 35 days. Backups are encrypted with AES-256 before they leave the host.")
    assert [c.verdict for c in mixed.claims] == [SUPPORTED, NOT_FOUND] and mixed.verdict == NOT_FOUND
    zh = kb.verify("数据库每 6 小时备份一次。磁盘使用率超过 90% 时发送告警。")
    assert [c.verdict for c in zh.claims] == [SUPPORTED, CONTRADICTED] and zh.verdict == CONTRADICTED
    assert overall([]) == NOT_FOUND and overall([NOT_FOUND, CONTRADICTED, SUPPORTED]) == CONTRADICTED


def test_claims_are_split_as_the_citer_splits_an_answer():
    assert claims_of("Backups are kept for 35 days [1]. How long are they kept? 备份保留 35 天。") == [
        "Backups are kept for 35 days.", "备份保留 35 天。"]  # markers gone, the question is no claim


def test_with_the_question_a_short_answer_is_read_as_its_answer(make_kb):
    kb = make_kb()
    assert kb.verify("Yes.", question="Are backups kept for 35 days?").verdict == SUPPORTED
    assert kb.verify("35 days", question="How long are backups kept?").verdict == SUPPORTED
    assert kb.verify("30 days", question="How long are backups kept?").verdict == CONTRADICTED


def test_a_passage_that_does_not_name_what_the_claim_names_is_no_evidence(make_kb):
    kb = make_kb()
    question = "How many days of paid leave do Globex employees get?"  # the checks read the question's words as known
    result = kb.verify("Globex employees get 25 days of paid leave a year.", question=question)
    assert result.verdict == NOT_FOUND and "no passage about Globex" in result.claims[0].reasons[0]
    assert kb.verify("Employees get 25 days of paid leave a year.", question=question).verdict == SUPPORTED
    assert claim_names("Pablo Trapero was born first.") == ["Pablo Trapero"]
    assert claim_names("Backups are kept for 35 days.") == []  # capitalised only as the sentence begins
    assert claim_names("Xinzheng is in Korea.", "Are Wenling and Xinzheng both in China?") == ["Xinzheng", "Korea"]


def test_a_bare_no_is_checked_against_its_question(make_kb):
    model = ScriptedChat(["REJECTED"])
    result = make_kb(model).verify("no", question="Are backups kept for 35 days?", llm=True)
    assert [(c.text, c.verdict) for c in result.claims] == [("no", NOT_FOUND)]
    prompt = model.calls[0].messages[-1].content
    assert "Are backups kept for 35 days?" in prompt and "Backups are kept for 35 days." in prompt


def test_text_that_states_nothing_is_refused_with_what_to_give(make_kb):
    with pytest.raises(InputError, match="nothing to check"):
        make_kb().verify("How long are backups kept?")


def test_only_the_callers_collections_are_evidence(make_kb):
    kb = make_kb()
    claim = "Employees get 25 days of paid leave a year."
    assert kb.verify(claim).verdict == SUPPORTED
    assert kb.verify(claim, collection="ops").verdict == NOT_FOUND
    ops_reader = Principal("reader", ("ops",), "k1", remote=True)
    hidden = kb.verify(claim, principal=ops_reader)
    assert hidden.verdict == NOT_FOUND and hidden.claims[0].citation is None
    assert kb.verify("Backups are kept for 35 days.", principal=ops_reader).verdict == SUPPORTED


# -- with a model: its one-claim verdict on what the deterministic checks support ---------------------

def test_the_models_verdict_is_asked_per_supported_claim_and_can_reject_it(make_kb):
    model = ScriptedChat(["REJECTED"])
    kb = make_kb(model)
    result = kb.verify("Backups are kept for 35 days. Backups are kept for 30 days.", llm=True)
    assert [c.verdict for c in result.claims] == [NOT_FOUND, CONTRADICTED]
    assert result.claims[0].checker == "deterministic+llm" and result.checker == "deterministic+llm"
    assert "does not state it" in result.claims[0].reasons[0]
    (call,) = model.calls  # the contradicted claim never reached the model
    prompt = call.messages[-1].content
    assert "Backups are kept for 35 days." in prompt and "35 days" in prompt


def test_a_claim_the_model_confirms_stays_supported(make_kb):
    model = ScriptedChat(["VERIFIED"])
    result = make_kb(model).verify("Backups are kept for 35 days.", llm=True)
    assert result.verdict == SUPPORTED and result.claims[0].citation.quote == "Backups are kept for 35 days."
    assert result.checker == "deterministic+llm" and len(model.calls) == 1


def test_the_pipelines_rule_decides_when_no_choice_is_given(make_kb):
    small, large = ScriptedChat(["REJECTED"], name="qwen2.5-1.5b-instruct"), ScriptedChat(["REJECTED"], name="qwen2.5-72b")
    assert make_kb(small).verify("Backups are kept for 35 days.").verdict == SUPPORTED
    assert small.calls == []  # a small model is not asked (answer.llm_check skips it in the pipeline too)
    assert make_kb(large).verify("Backups are kept for 35 days.").verdict == NOT_FOUND and len(large.calls) == 1
    unasked = ScriptedChat(["REJECTED"], name="qwen2.5-72b")
    assert make_kb(unasked, llm_check=False).verify("Backups are kept for 35 days.").verdict == SUPPORTED
    assert make_kb(unasked).verify("Backups are kept for 35 days.", llm=False).verdict == SUPPORTED
    assert unasked.calls == []


def test_a_failing_model_leaves_the_deterministic_verdict_and_says_so(make_kb):
    model = ScriptedChat([LLMError("the chat model at http://127.0.0.1:9/v1 refused the connection")])
    result = make_kb(model).verify("Backups are kept for 35 days. API keys are rotated every 90 days.", llm=True)
    assert result.verdict == SUPPORTED and len(model.calls) == 1  # not asked again for the second claim
    assert result.checker == "deterministic" and "fact-check failed" in result.notes[0]


def test_asking_for_the_model_without_one_says_only_the_checks_ran(make_kb):
    result = make_kb().verify("Backups are kept for 35 days.", llm=True)
    assert result.verdict == SUPPORTED and "only the deterministic checks ran" in result.notes[0]
