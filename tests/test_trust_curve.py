"""The trust harness's trade-off curve and reliability table of a threshold-0 run (benchmarks/trust/report.py)."""

from __future__ import annotations

import importlib.util
import sys
import json
from pathlib import Path

_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "trust"
sys.path.insert(0, str(_DIR))  # report.py imports score.py beside it
_spec = importlib.util.spec_from_file_location("trust_report", _DIR / "report.py")
report = importlib.util.module_from_spec(_spec)
sys.modules["trust_report"] = report
_spec.loader.exec_module(report)


def row(answerable: bool, outcome: str, evidence: float) -> dict:
    return {"answerable": answerable, "outcome": outcome, "evidence": evidence}


ROWS = [row(True, "correct", 0.7), row(True, "correct", 0.4), row(True, "wrong", 0.5), row(True, "correct", 0.1),
        row(False, "answered", 0.46), row(False, "answered", 0.2)]


def test_the_curve_counts_each_threshold_as_a_cut_of_the_probability(capsys):
    report.curve(ROWS, thresholds=(0.0, 0.3, 0.6))
    out = capsys.readouterr().out
    assert "threshold-0" not in out  # nothing abstained: a threshold-0 run
    # 0.3: right 2 of 4 answerable, 1 of 2 near misses abstained, 2 of the 4 answers shown right
    assert "| 0.300 | 50 % (2/4) | 50 % (1/2) | 50 % (2/4) |" in out
    assert "| 0.600 | 25 % (1/4) | 100 % (2/2) | 100 % (1/1) |" in out
    assert "| 0.000 | 75 % (3/4) | 0 % (0/2) | 50 % (3/6) |" in out
    # reliability: 0.4-0.5 holds 0.4 (right) and 0.46 (a near miss answered)
    assert "| 0.400–0.500 | 2 | 0.43 | 50 % (1/2) |" in out


def test_a_run_that_abstained_is_said_to_be_one(capsys):
    report.curve([*ROWS, row(True, "false_abstention", 0.2)], thresholds=(0.3,))
    assert "not a threshold-0 run" in capsys.readouterr().out


def _run_row(qid: str, answerable: bool, outcome: str) -> dict:
    return {"id": qid, "run": "extractive", "split": "valid", "lang": "en", "kind": "number", "question": "How big?",
            "answer": "It is 900,000 bytes.", "answerable": answerable, "outcome": outcome}


def test_compare_reports_a_relabelled_question_apart_and_counts_the_rest(capsys):
    """A question whose gold turned from near miss to answerable between two runs is named, not scored as better or
    worse (its outcomes belong to different tables); the other changes are counted as before."""
    a = [_run_row("pdf-manuals-v006", False, "abstained"), _run_row("git-relnotes-v001", True, "wrong"),
         _run_row("git-relnotes-v002", True, "correct")]
    b = [_run_row("pdf-manuals-v006", True, "false_abstention"), _run_row("git-relnotes-v001", True, "correct"),
         _run_row("git-relnotes-v002", True, "correct")]
    assert report.compare(a, b) == 0
    out = capsys.readouterr().out
    assert "RELABELLED  pdf-manuals-v006: answerable False -> True" in out
    assert "1 better in B, 0 worse in B, 1 the same; 1 relabelled" in out


def test_the_reliability_table_is_cut_at_the_shipped_threshold_and_high_band(capsys, monkeypatch, tmp_path):
    """The table's bands are the confidence levels a user is shown: cut where the shipped decision abstains and where
    `high` starts, whatever those are after a refit."""
    shipped = json.loads((Path(__file__).resolve().parents[1] / "src" / "docqa" / "answer" / "decision.json").read_text(encoding="utf-8"))
    path = tmp_path / "decision.json"
    path.write_text(json.dumps({**shipped, "threshold": 0.45, "bands": {"high": 0.62, "medium": 0.45}}), encoding="utf-8")
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(path))
    report.curve(ROWS)
    out = capsys.readouterr().out
    assert "| 0.450 | 25 % (1/4) | 50 % (1/2) | 33 % (1/3) |" in out  # the shipped threshold is a row of the curve
    assert "| 0.400–0.450 | 1 | 0.40 | 100 % (1/1) |" in out and "| 0.450–0.500 | 1 | 0.46 | 0 % (0/1) |" in out
    assert "| 0.500–0.620 | 1 | 0.50 | 0 % (0/1) |" in out and "| 0.620–0.700 | 1 | 0.70 |" not in out
    assert "| 0.700–1.000 | 1 | 0.70 | 100 % (1/1) |" in out
