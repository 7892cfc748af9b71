"""benchmarks/answer_eval.py --cmrc: CMRC 2018 dev as an answer-or-abstain set (the decision's Chinese fit rows and guard)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "answer_eval.py"
_spec = importlib.util.spec_from_file_location("answer_eval", _PATH)
answer_eval = importlib.util.module_from_spec(_spec)
sys.modules["answer_eval"] = answer_eval
_spec.loader.exec_module(answer_eval)


@pytest.mark.shared
def test_the_cmrc_set_asks_the_ingested_paragraphs_and_others_that_are_not(shared_data, tmp_path, monkeypatch):
    monkeypatch.setattr(answer_eval, "CMRC", shared_data / "retrieval" / "cmrc2018-dev")
    docs, items = answer_eval.cmrc_set(tmp_path, 12)
    files = {p.name: p.read_text(encoding="utf-8") for p in docs.glob("*.md")}
    assert len(files) == 12 and all(text.startswith("# ") for text in files.values())
    answerable = [i for i in items if not i.impossible]
    unanswerable = [i for i in items if i.impossible]
    assert answerable and unanswerable
    for item in answerable:  # its paragraph is ingested, and one of its answers is in it verbatim
        assert item.article in files and any(a in files[item.article] for a in item.answers)
    assert all(i.article not in files and i.answers == [] for i in unanswerable)
    assert {i.article for i in unanswerable}.isdisjoint(files)
    again, _ = answer_eval.cmrc_set(tmp_path, 12)  # a fixed draw: the same paragraphs, no file of an earlier draw left
    assert sorted(p.name for p in again.glob("*.md")) == sorted(files)
    questions = {json.loads(x)["text"] for x in (answer_eval.CMRC / "queries.jsonl").read_text(encoding="utf-8").splitlines()}
    assert all(i.question in questions for i in items)


def test_without_the_cmrc_data_the_set_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(answer_eval, "CMRC", tmp_path / "nowhere")
    with pytest.raises(SystemExit, match="cmrc2018-dev"):
        answer_eval.cmrc_set(tmp_path, 3)
