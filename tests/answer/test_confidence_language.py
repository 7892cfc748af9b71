"""The confidence's reasons in the question's language (issue 28, `xling`): a Chinese question, over Chinese or English
documents, reads why its confidence is what it is in Chinese, with the same numbers as the English text."""

from __future__ import annotations

import json
import re

import pytest

from docqa.answer.answerability import decision
from docqa.answer.confidence import confidence
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

_HIGH, _MEDIUM = decision()["bands"]["high"], decision()["bands"]["medium"]


@pytest.mark.parametrize("status, kwargs, level, english, chinese", [
    ("VERIFIED", {"top_score": 0.6}, "medium", "high needs 0.70", "高需 0.70"),
    ("VERIFIED", {"top_score": 0.3}, "medium", "under the relevance threshold 0.50", "低于相关性阈值 0.50"),
    ("PARTIAL", {"top_score": 0.9}, "medium", "the answer is partial", "答案只有部分通过核查"),
    ("UNVERIFIED", {"top_score": 0.9}, "low", "the answer is unverified", "答案未通过核查"),
    ("VERIFIED", {"top_score": 0.9, "evidence": (_HIGH + _MEDIUM) / 2}, "medium", "(medium: ", "（中："),
    ("VERIFIED", {"top_score": 0.9, "evidence": _MEDIUM - 0.05}, "low", "(low: under ", "（低：低于 "),
])
def test_the_reasons_come_in_the_answers_language(status, kwargs, level, english, chinese):
    got_en, reasons_en = confidence(status, answerable=True, relevance_threshold=0.5, **kwargs)
    got_zh, reasons_zh = confidence(status, answerable=True, relevance_threshold=0.5, language="zh", **kwargs)
    assert got_en == got_zh == level  # the level is the answer's field, the same in every language
    assert any(english in r for r in reasons_en) and not any(re.search(r"[\u4e00-\u9fff]", r) for r in reasons_en)
    assert any(chinese in r for r in reasons_zh) and not any(re.search(r"[A-Za-z]{3,}", r) for r in reasons_zh)
    # the same numbers in both
    assert [re.findall(r"\d\.\d+", r) for r in reasons_en] == [re.findall(r"\d\.\d+", r) for r in reasons_zh]


def test_the_chinese_text_never_contradicts_its_number():
    stated = re.compile(r"答案正确的概率为 ([0-9.]+)（(低|中)：(?:低于 ([0-9.]+)|([0-9.]+) 至 ([0-9.]+))）$")
    for evidence in (_MEDIUM - 0.0004, _MEDIUM, _MEDIUM + 0.0004, (_MEDIUM + _HIGH) / 2, _HIGH - 1e-9):
        level, reasons = confidence("VERIFIED", answerable=True, top_score=0.9, relevance_threshold=0.5, evidence=evidence,
                                    language="zh")
        m = next(stated.search(r) for r in reasons if stated.search(r))
        shown = float(m.group(1))
        assert {"低": "low", "中": "medium"}[m.group(2)] == level
        if level == "low":
            assert shown < float(m.group(3))
        else:
            assert float(m.group(4)) <= shown < float(m.group(5))


FAQ_ZH = "# 运维常见问题\n\n## 备份保留多久？\n\n备份在归档存储中保留 35 天。\n\n## 日志保留多久？\n\n日志在归档桶中保留 14 天。\n"
FAQ_EN = "# Operations FAQ\n\n## How long are backups kept?\n\nBackups are kept for 35 days.\n"


@pytest.mark.parametrize("question, written", [
    ("备份保留多久？", re.compile(r"^答案正确的概率为 [0-9.]+（中：[0-9.]+ 至 [0-9.]+）$")),
    ("How long are backups kept?", re.compile(r"^the probability that .+ is [0-9.]+ \(medium: [0-9.]+ to [0-9.]+\)$")),
])
def test_an_answer_states_its_confidence_in_the_questions_language(question, written, tmp_path, embedder, monkeypatch):
    """Through the knowledge base: a Chinese question's answer gives its reason in Chinese, an English one's in English
    (over a folder holding both languages; the bands raised so that the answer is "medium" and says why)."""
    candidate = tmp_path / "decision.json"
    candidate.write_text(json.dumps({**decision(), "bands": {"high": 0.999, "medium": decision()["threshold"]}}), encoding="utf-8")
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(candidate))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq-zh.md").write_text(FAQ_ZH, encoding="utf-8")
    (docs / "faq-en.md").write_text(FAQ_EN, encoding="utf-8")
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}), embedder=embedder) as kb:
        kb.add([docs])
        answer = kb.ask(question)
    assert answer.answerable and answer.confidence == "medium"
    assert any(written.search(r) for r in answer.confidence_reasons), answer.confidence_reasons
