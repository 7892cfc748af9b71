"""The Q&A log rows, what needs attention and why, the exports, and the previous turn of a conversation."""

from __future__ import annotations

import csv
import io
import json

import pytest

from docqa.session import export, needs_attention, previous_turn, qa_log, render_markdown, trim, write_csv, write_jsonl
from docqa.types import CANCELLED, FAILED, FALLBACK, RUNNING, SUCCESS, FeedbackRecord, RunRecord


def _cite(*paths: str) -> list[dict]:
    return [{"n": i, "path": p, "quote": "..."} for i, p in enumerate(paths, start=1)]


def _run(run_id: str, status: str = SUCCESS, *, answer: str | None = "An answer.", answerable: bool | None = True,
         confidence: str | None = "high", paths: tuple[str, ...] = (), ratings: tuple = (), **extra) -> RunRecord:
    feedback = [FeedbackRecord(i, run_id, rating, comment, "2026-01-31T10:00:00.000+00:00")
                for i, (rating, comment) in enumerate(ratings, start=1)]
    result = {"answer": answer, "citations": _cite(*paths)} if status != RUNNING else None
    return RunRecord(id=run_id, session_id="s1", question=f"question {run_id}?", status=status, answer=answer,
                     answerable=answerable, confidence=confidence, result=result, mode="pipeline", model="m",
                     created_at=f"2026-01-31T10:00:0{run_id[-1]}.000+00:00", feedback=feedback, **extra)


def test_qa_log_rows():
    run = _run("r1", paths=("/b.md", "/a.md", "/b.md", "/c.md", "/d.md", "/a.md", "/b.md"),
               ratings=(("up", None), ("up", "clear"), ("down", "too long")))
    [row] = qa_log([run])
    assert row["run_id"] == "r1" and row["session_id"] == "s1" and row["question"] == "question r1?"
    assert row["answer"] == "An answer." and row["status"] == SUCCESS and row["answerable"] is True
    assert row["confidence"] == "high" and row["mode"] == "pipeline" and row["model"] == "m"
    assert (row["feedback_up"], row["feedback_down"]) == (2, 1)
    assert row["comments"] == ["clear", "too long"]
    assert row["sources"] == ["/b.md", "/a.md", "/c.md"]  # most cited first, ties in citation order
    json.dumps(row)  # every row is plain JSON


def test_answer_falls_back_to_the_result():
    run = _run("r1", answer=None)
    run.result = {"answer": "From the result."}
    assert qa_log([run])[0]["answer"] == "From the result."


@pytest.mark.parametrize(
    ("run", "reason"),
    [
        (_run("r1", answerable=False, confidence="low"), "not answered: the documents do not seem to hold it"),
        (_run("r2", FAILED, answer=None, answerable=None, confidence=None, error="model unreachable"), "failed: model unreachable"),
        (_run("r3", confidence="low"), "low confidence"),
        (_run("r4", FALLBACK, confidence="low"), "low confidence"),
        (_run("r5", ratings=(("down", "wrong port"),)), "rated down: wrong port"),
        (_run("r6", ratings=(("down", None),)), "rated down"),
        (_run("r7", answerable=False, ratings=(("down", "missing"),)),
         "not answered: the documents do not seem to hold it; rated down: missing"),
    ],
)
def test_needs_attention_reasons(run, reason):
    [row] = needs_attention([run])
    assert row["reason"] == reason and row["run_id"] == run.id


def test_good_running_and_cancelled_runs_need_no_attention():
    runs = [_run("r1"), _run("r2", confidence="medium", ratings=(("up", None),)), _run("r3", RUNNING, answer=None),
            _run("r4", CANCELLED, answer=None, answerable=None)]
    assert needs_attention(runs) == []
    assert len(qa_log(runs)) == 4


def test_markdown_export():
    rows = needs_attention([_run("r1", answer="Line one [1].\nLine two.", confidence="low", paths=("/docs/ops.md",),
                                 ratings=(("down", "outdated"),))])
    text = render_markdown(rows, "Questions that need attention")
    assert text.startswith("# Questions that need attention\n")
    assert "## 2026-01-31 10:00 · SUCCESS · low" in text
    assert "**Question:** question r1?" in text
    assert "**Needs attention:** low confidence; rated down: outdated" in text
    assert "> Line one [1].\n> Line two." in text
    assert "**Sources:** `/docs/ops.md`" in text and "- outdated" in text and "run r1" in text


def test_csv_export_round_trips():
    rows = qa_log([_run("r1", paths=("/a.md", "/b.md"), ratings=(("up", "good, thanks"),)),
                   _run("r2", FAILED, answer=None, answerable=None, confidence=None, error='bad "quote"')])
    fp = io.StringIO()
    write_csv(rows, fp)
    read = list(csv.DictReader(io.StringIO(fp.getvalue())))
    assert [r["run_id"] for r in read] == ["r1", "r2"]
    assert read[0]["sources"] == "/a.md | /b.md" and read[0]["comments"] == "good, thanks"
    assert read[0]["answerable"] == "true" and read[1]["answerable"] == "" and read[1]["error"] == 'bad "quote"'
    assert "reason" not in read[0]
    fp = io.StringIO()
    write_csv(needs_attention([_run("r3", confidence="low")]), fp)
    assert next(csv.DictReader(io.StringIO(fp.getvalue())))["reason"] == "low confidence"


def test_jsonl_export_and_format_choice():
    rows = qa_log([_run("r1", answer="密钥每 90 天轮换一次。"), _run("r2")])
    fp = io.StringIO()
    write_jsonl(rows, fp)
    lines = fp.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == rows and "密钥" in lines[0]  # not \\u-escaped
    same = io.StringIO()
    export(rows, "jsonl", same)
    assert same.getvalue() == fp.getvalue()
    with pytest.raises(ValueError, match="unknown log format"):
        export(rows, "xml", io.StringIO())


# -- previous turn ---------------------------------------------------------------------------
def test_previous_turn_takes_the_last_answered_run():
    runs = [_run("r1", answer="Old answer."), _run("r2", FALLBACK, answer="Backups run nightly [1]. They are kept 30 days [2].",
                                                      paths=("/ops.md", "/ops.md", "/faq.md")),
            _run("r3", FAILED, answer=None), _run("r4", CANCELLED, answer=None), _run("r5", RUNNING, answer=None)]
    turn = previous_turn(runs, 1000)
    assert turn == {"question": "question r2?", "answer_summary": "Backups run nightly. They are kept 30 days.",
                    "sources": ["/ops.md", "/faq.md"]}


def test_previous_turn_none_without_an_answered_run():
    assert previous_turn([], 500) is None
    assert previous_turn([_run("r1", FAILED), _run("r2", RUNNING)], 500) is None


def test_previous_turn_respects_max_chars():
    answer = "The first sentence explains the backup schedule in detail. " * 10
    paths = tuple(f"/docs/section-{i}/page.md" for i in range(8))
    run = _run("r1", answer=answer, paths=paths)
    run.question = "How and when are the backups of the production database made, and who checks them? " * 3
    for max_chars in (40, 120, 300, 2000):
        turn = previous_turn([run], max_chars)
        size = len(turn["question"]) + len(turn["answer_summary"]) + sum(map(len, turn["sources"]))
        assert size <= max_chars
        assert len(turn["answer_summary"]) <= max_chars // 2
        assert len(turn["sources"]) <= 5
    roomy = previous_turn([run], 2000)
    assert roomy["answer_summary"].endswith("in detail.")  # cut at a sentence end
    assert len(roomy["sources"]) == 5 and roomy["question"] == " ".join(run.question.split())


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short.", 50, "Short."),
        ("The cache is 3.5 GB. It is rotated daily and deleted after a week.", 25, "The cache is 3.5 GB."),
        ("one two three four five six seven eight", 20, "one two three four…"),
        ("数据库每天凌晨两点备份。备份保留三十天，之后自动删除。", 16, "数据库每天凌晨两点备份。"),
        ("abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"),
        ("spaces   and\nnewlines  collapse", 100, "spaces and newlines collapse"),
    ],
)
def test_trim(text, limit, expected):
    assert trim(text, limit) == expected and len(trim(text, limit)) <= limit


@pytest.mark.parametrize("text, cell", [
    ("=1+1", "'=1+1"), ("+33 1 23", "'+33 1 23"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("plain = text", "plain = text"), ("", ""),
])
def test_csv_cells_a_spreadsheet_would_run_are_made_text(text, cell):
    fp = io.StringIO()
    write_csv(qa_log([_run("r1", ratings=(("down", text or None),))]), fp)
    assert next(csv.DictReader(io.StringIO(fp.getvalue())))["comments"] == cell
