"""Where the chat model's drafts go (issue 28, item 7): per question, what the model wrote, what the checks
and the acceptance rule said of it, and what was published — beside the extractive run of the same questions.

    python benchmarks/trust/model_drafts.py RUN.jsonl [--extractive EXTRACTIVE.jsonl] [--kb KB [--since TIME]] [--show N]

RUN.jsonl is a run of evaluate.py with --llm.  The model's calls come from each row's `model_trace`
(evaluate.py records it); for older runs without it, from the knowledge base's run log (--kb: the first run
whose question and published answer match the row's).  Per question it prints: the outcome against the
extractive run's, who wrote the published text, each model reply, the checks' rejections, the acceptance
verdict and its reason, and whether the model's own draft was right (every answers group in it, scored as
evaluate.py scores a published answer: score.matched_groups).  Then the counts by verdict: where the model
was right and its draft was not published (a win lost), where it was wrong and was stopped (a loss avoided),
calls and seconds per question.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402  (beside this file, on the path set above)
import score  # noqa: E402

MODEL_STAGES = ("generating", "citing", "checking", "draft_rejected", "accepting", "fallback", "short_answer", "choosing",
                "checking_pick", "requery", "judging", "agreeing")


def model_trace(trace: list[dict]) -> list[dict]:
    """The entries of a run's trace that say what the model did: its calls (reply, tokens, seconds, without the
    prompt), the rejections, the acceptance verdict and the short-answer step (evaluate.py keeps these per row)."""
    out = []
    for entry in trace:
        if entry.get("stage") not in MODEL_STAGES:
            continue
        kept = {k: v for k, v in entry.items() if k not in ("messages", "at", "claims", "before")}
        if "model_call" in entry:
            kept["prompt_chars"] = sum(len(m.get("content") or "") for m in entry.get("messages") or [])
        out.append(kept)
    return out


def from_log(rows: list[dict], kb_path: str, since: str | None = None) -> dict[str, list[dict]]:
    """Row id -> model trace, from the knowledge base's run log (runs of evaluate.py before it kept them), only
    the runs asked at or after `since` (an ISO time or date, UTC) when given."""
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    with KnowledgeBase(Settings(kb=kb_path, llm={"provider": "none"})) as kb:
        runs = [r for r in kb.log.runs(since=since) if r.model]
    by_key: dict[tuple[str, str], list] = {}
    for r in reversed(runs):  # oldest first: the first run of a question with that answer wins (a later one may
        # have published the same text another way: give each run its own copy of the knowledge base to be sure)
        by_key.setdefault((r.question, (r.answer or "").strip()), []).append(r)
    out = {}
    for row in rows:
        found = by_key.get((row["question"], (row["answer"] or "").strip()))
        if found:
            out[row["id"]] = model_trace(found[0].trace)
    return out


def replies(trace: list[dict]) -> list[str]:
    return [e.get("reply") or "" for e in trace if "model_call" in e]


def verdict(trace: list[dict]) -> tuple[str, str]:
    """The acceptance verdict (outcome, reason) of the run's last accepting or short-answer step."""
    for entry in reversed(trace):
        if entry.get("stage") in ("accepting", "short_answer") and entry.get("outcome"):
            return entry["outcome"], entry.get("reason") or ""
    return "none", "the model was not asked, or its reply was not judged"


def draft_right(row: dict, trace: list[dict]) -> bool | None:
    """Whether any of the model's replies holds every answers group (None: an unanswerable question or no reply)."""
    texts = [t for t in replies(trace) if t.strip() and "NOT_FOUND" not in t]
    if not row["answerable"] or not row.get("answers_groups"):
        return None
    return any(all(score.matched_groups(t, row["answers_groups"])) for t in texts) if texts else False


def category(reason: str, outcome: str) -> str:
    """A short name for an acceptance reason (the rule's sentences, docqa.answer.accept and short.py)."""
    r = reason.lower()
    for key, name in (("model found no answer, but", "model said not found, evidence good"),
                      ("the model found no answer", "model said not found"),
                      ("not answer in", "wrong language"), ("verified", "checks"), ("states nothing", "states nothing"),
                      ("no passage answers", "weak evidence"), ("acceptance rule is off", "rule off")):
        if key in r:
            return f"{outcome}: {name}"
    return f"{outcome}: {reason[:60]}" if reason else outcome


def load_answers(rows: list[dict]) -> None:
    """Each row's answers groups from the question files (the rows keep only which groups matched)."""
    import evaluate

    by_id = {q["id"]: q for q in evaluate.load_questions(sorted(HERE.glob("questions_*.jsonl")))}
    for row in rows:
        row["answers_groups"] = (by_id.get(row["id"]) or {}).get("answers") or []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run of evaluate.py with --llm")
    ap.add_argument("--extractive", help="the extractive run of the same questions")
    ap.add_argument("--kb", help="the knowledge base whose run log holds the run's traces (rows without model_trace)")
    ap.add_argument("--since", help="with --kb: only runs asked at or after this UTC time (e.g. 2026-12-06T08:33)")
    ap.add_argument("--show", type=int, default=400, help="characters of each reply shown")
    args = ap.parse_args(argv)
    rows = report.load(Path(args.run))
    load_answers(rows)
    traces = {r["id"]: r["model_trace"] for r in rows if "model_trace" in r}
    if len(traces) < len(rows) and args.kb:
        traces.update({k: v for k, v in from_log([r for r in rows if r["id"] not in traces], args.kb, args.since).items()})
    ext = {r["id"]: r for r in report.load(Path(args.extractive))} if args.extractive else {}
    tally: collections.Counter = collections.Counter()
    calls, seconds = [], []
    for row in rows:
        trace = traces.get(row["id"], [])
        outcome, reason = verdict(trace)
        right = draft_right(row, trace)
        e = ext.get(row["id"])
        delta = ""
        if e:
            d = report.RANK[row["answerable"]][row["outcome"]] - report.RANK[row["answerable"]][e["outcome"]]
            delta = "better" if d > 0 else "WORSE" if d < 0 else "same"
        tally[(category(reason, outcome), {True: "draft right", False: "draft wrong", None: "-"}[right])] += 1
        calls.append(sum("model_call" in t for t in trace))
        seconds.append(row["seconds"])
        against = f" (extractive {e['outcome']}: {delta})" if e else ""
        print(f"\n## {row['id']} ({row['lang']}, {row['kind']}, {'answerable' if row['answerable'] else 'near miss'}) "
              f"{row['outcome']}{against}; published {row['written_by']}; {calls[-1]} calls, {row['seconds']:.0f}s")
        print(f"Q: {row['question']}")
        for i, text in enumerate(replies(trace), 1):
            print(f"  reply {i}: {' '.join(text.split())[: args.show]}")
        for t in trace:
            if t.get("stage") == "draft_rejected":
                print(f"  rejected: {'; '.join(t.get('reasons') or [])[: args.show]}")
        print(f"  verdict: {outcome} — {reason}; draft right: {right}")
        print(f"  published: {' '.join((row['answer'] or '').split())[: args.show]}")
    print("\n# verdicts (acceptance outcome: reason | the model's draft)")
    for (cat, right), n in tally.most_common():
        print(f"- {cat} | {right}: {n}")
    if calls:
        print(f"\nmodel calls per question: mean {statistics.mean(calls):.2f}; seconds per question: mean "
              f"{statistics.mean(seconds):.1f}, p95 {sorted(seconds)[min(len(seconds) - 1, int(len(seconds) * 0.95))]:.1f}")
        published = [r for r in rows if r["written_by"] == "model"]
        ok = [r for r in published if r["outcome"] == "correct"]
        print(f"published answers whose text the model wrote: {len(published)} of {sum(r['written_by'] != 'not_found' for r in rows)} "
              f"published; correct and cited {len(ok)} of them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
