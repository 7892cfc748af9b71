"""Escalation after repeated rejection (issue 17, part 3): each branch with the scripted model, and
the real 1.5B on the questions it fails.

    python benchmarks/escalation.py --scripted
    python benchmarks/escalation.py --llm http://127.0.0.1:PORT/v1 [--limit N] [--reuse] [--review-rounds 1]

--scripted: a three-file knowledge base and the scripted OpenAI-compatible server (tests/llm); one
scenario per diagnosis (changed file, retrieval, format, unexplained with and without
llm.escalation_model), each asked with escalation on and, as the same-run baseline, off
(answer.escalate false).  Reported: the diagnosis, the action, whether the final answer was
published as the model's (the acceptance rule's outcome), its verification, model calls, seconds.

--llm: the knowledge base and questions of benchmarks/model_answers.py (66 files, 44 questions),
the pipeline with the real model.  Every question is asked with escalation on; the questions where
it escalated (the checks rejected the model in every round: the ones it fails) are asked again with
escalation off, the same-run baseline.  Reported: escalations, by diagnosis and action, how many
were then accepted (published as the model's answer), accuracy with a citation of the gold file,
seconds, model calls and tokens, for those questions with and without escalation.  Rows go to
.work/escalation/rows.jsonl as they come.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
WORK = HERE / ".work" / "escalation"

import model_answers as ma  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402


# -- the scripted branches ------------------------------------------------------------------------
OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
VAULT = "# Archive\n\nOffsite backup copies are held in the Glacier vault for 400 days.\n"
DB_Q, KEPT_Q = "How often is the database backed up?", "How long are backups kept?"


def _glacier(body: dict) -> dict:
    import re

    prompt = body["messages"][-1]["content"]
    n = next(m.group(1) for m in re.finditer(r'<source id="(\d+)"[^>]*>(.*?)</source>', prompt, re.S) if "Glacier" in m.group(2))
    return {"text": f"Offsite backup copies are held in the Glacier vault for 400 days [{n}]."}


def scenarios() -> list[dict]:
    """(name, question, script of the chat model, of the escalation model, settings, a change to the files)."""
    wrong8 = {"text": "The database is backed up every 8 hours [1]."}
    loose = {"text": "Backups last roughly one month, usually."}
    vault = {"text": "Offsite backup copies are held in the Glacier vault for 400 days [1]."}
    four = {"text": "The database is backed up every 4 hours [1]."}
    ok = {"text": "VERIFIED"}
    return [
        {"name": "changed file", "question": DB_Q, "script": [four, four, four, four, ok], "change": True},
        {"name": "retrieval", "question": KEPT_Q, "script": [vault, vault, vault, _glacier, ok],
         "search": {"relevance_threshold": 1.0}, "answer": {"top_k": 1}},
        {"name": "format", "question": KEPT_Q, "script": [loose, loose, loose, {"text": "Backups are kept for 35 days [1]."}, ok]},
        {"name": "unexplained + escalation model", "question": DB_Q, "script": [wrong8, wrong8, wrong8, ok],
         "strong": [{"text": "The database is backed up every 6 hours [1].", "usage": (1000, 50)}]},
        {"name": "unexplained, no escalation model", "question": DB_Q, "script": [wrong8, wrong8, wrong8]},
    ]


def run_scripted() -> list[dict]:
    from llm.scripted_server import ScriptedServer

    rows = []
    for sc in scenarios():
        for escalate in (True, False):
            with tempfile.TemporaryDirectory() as tmp, ScriptedServer(list(sc["script"])) as server, \
                    ScriptedServer(list(sc.get("strong", []))) as strong:
                docs = Path(tmp) / "docs"
                docs.mkdir()
                (docs / "ops.md").write_text(OPS, encoding="utf-8")
                (docs / "vault.md").write_text(VAULT, encoding="utf-8")
                llm = {"provider": "openai", "base_url": server.base_url, "model": "scripted", "timeout": 5, "max_retries": 0}
                if "strong" in sc:
                    llm.update(escalation_model="strong", escalation_base_url=strong.base_url,
                               escalation_prompt_price=2.0, escalation_completion_price=8.0)
                settings = Settings(kb=str(Path(tmp) / "kb.db"), llm=llm, search=sc.get("search", {}),
                                    answer={**sc.get("answer", {}), "escalate": escalate})
                with KnowledgeBase(settings) as kb:
                    kb.add([docs])
                    if sc.get("change"):
                        (docs / "ops.md").write_text(OPS.replace("every 6 hours", "every 4 hours, then compressed,"), encoding="utf-8")
                    t0 = time.perf_counter()
                    answer = kb.ask(sc["question"])
                    seconds = time.perf_counter() - t0
                    esc = answer.retrieval.to_dict().get("escalation") or {}
                    rows.append({"scenario": sc["name"], "escalate": escalate, "kind": esc.get("kind"),
                                 "action": esc.get("action"), "outcome": esc.get("outcome"),
                                 "published": answer.retrieval.to_dict().get("acceptance", {}).get("outcome"),
                                 "verification": answer.verification.status, "answer": answer.answer[:80],
                                 "calls": len(server.requests) + len(strong.requests),
                                 "cost": answer.usage.get("cost"), "seconds": round(seconds, 2)})
    return rows


def report_scripted(rows: list[dict]) -> None:
    print("| scenario | escalation | diagnosis | action | published | verification | model calls | cost | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['scenario']} | {'on' if r['escalate'] else 'off (baseline)'} | {r['kind'] or '–'} | "
              f"{r['action'] or '–'} | {r['published']} | {r['verification']} | {r['calls']} | {r['cost']} | {r['seconds']} |")


# -- the real model --------------------------------------------------------------------------------
# Questions written to make a small model fail the checks: the answer is a figure the documents do not
# state (a difference, a sum, a conversion), which the fact check cannot find in the cited passage.
HARD = [
    ("hard", "How many more Stanley Cups have the Montreal Canadiens won than the Toronto Maple Leafs?", ["11"], "stanley-cups.csv"),
    ("hard", "How much do two Pruning Shears cost together?", ["49.98"], "arbitrary-records.json"),
    ("hard", "How many bottles of water, blankets and laptops were delivered in total?", [], "fake-memo.pdf"),
    ("hard", "By how many times did the price of oil multiply during the 1973 oil crisis?", ["4", "four"], "1973_oil_crisis.md"),
    ("hard", "How many years after Newcomen's engine did James Watt patent his improvement?", [], "Steam_engine.md"),
    ("hard", "What were Nespresso's sales in January–June 2023, in billions of CHF?", ["3.1"], "2023-half-year-analyses-by-segment.xlsx"),
    ("hard", "How many years passed between the Treaty of Rome and the Treaty of Lisbon?", ["50"], "European_Union_law.md"),
    ("hard", "What percentage of the time does a packet-switched network spend idle, according to the article?", [], None),
]


def settings(db: Path, args, escalate: bool) -> Settings:
    llm = {"provider": "openai", "base_url": args.llm, "model": args.model, "max_tokens": 320, "context_window": 4096,
           "timeout": 600, "temperature": 0.0, "max_retries": 0}
    answer = {"review_rounds": args.review_rounds, "escalate": escalate}
    if args.abstain is not None:  # the evidence gate answers "not found" before the model under it
        answer["abstain_threshold"] = args.abstain
    return Settings(kb=str(db), llm=llm, answer=answer)


def question_set(args) -> list[dict]:
    """model_answers' 44 questions (or those a rows file's run answered with no model call: --gated), and --hard."""
    qs = ma.questions(8, 4)
    if args.gated:
        rows = [json.loads(x) for x in Path(args.gated).read_text(encoding="utf-8").splitlines() if x.strip()]
        gated = {r["question"] for r in rows if r["run"] == "escalate" and r["calls"] == 0}
        qs = [q for q in qs if q["question"] in gated]
    if args.hard:
        qs = ([] if args.hard_only else qs) + [{"kind": k, "question": q, "answers": a, "file": f} for k, q, a, f in HARD]
    return qs[: args.limit] if args.limit else qs


def ask(kb: KnowledgeBase, q: dict, gold: str | None, label: str) -> dict:
    t0 = time.perf_counter()
    answer = kb.ask(q["question"], mode="pipeline")
    seconds = time.perf_counter() - t0
    esc = answer.retrieval.to_dict().get("escalation") or {}
    paths = [c.path for c in answer.citations]
    return {"run": label, "kind": q["kind"], "question": q["question"], "answer": answer.answer[:300],
            "escalated": bool(esc), "diagnosis": esc.get("kind"), "action": esc.get("action"),
            "outcome": esc.get("outcome"), "retry_rejected": esc.get("retry_rejected"),
            "published": (answer.retrieval.to_dict().get("acceptance") or {}).get("outcome"),
            "seconds": round(seconds, 2), "calls": answer.usage.get("model_calls", 0),
            "tokens": answer.usage.get("total_tokens", 0),
            **ma.score(q, answer.answer, answer.answerable, paths, [c.quote for c in answer.citations], gold)}


def run_real(args) -> list[dict]:
    WORK.mkdir(parents=True, exist_ok=True)
    db = WORK / "kb.db"
    if not args.reuse or not db.exists():
        for stale in WORK.glob("kb.db*"):
            stale.unlink()
        shutil.rmtree(WORK / "docs", ignore_errors=True)
        ma.build(WORK / "docs")
        with KnowledgeBase(Settings(kb=str(db), llm={"provider": "none"})) as kb:
            kb.add([WORK / "docs"])
    qs = question_set(args)
    out = Path(args.out)
    out.write_text("", encoding="utf-8")
    rows: list[dict] = []
    cache: dict = {}

    def emit(r: dict) -> None:
        rows.append(r)
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"  {r['run']:9} {r['kind']:9} esc={r['diagnosis'] or '-':13} pub={r['published']} ok={int(r['correct'])} "
              f"{r['seconds']:6.1f}s calls={r['calls']} {r['question'][:50]}", file=sys.stderr, flush=True)

    with KnowledgeBase(settings(db, args, True)) as kb, KnowledgeBase(settings(db, args, False)) as plain:
        for q in qs:
            gold = ma.gold_paragraph(kb, q, cache)
            r = ask(kb, q, gold, "escalate")
            emit(r)
            if r["escalated"]:
                emit(ask(plain, q, gold, "baseline"))
    return rows


def report_real(rows: list[dict]) -> None:
    on = [r for r in rows if r["run"] == "escalate"]
    esc = [r for r in on if r["escalated"]]
    base = {r["question"]: r for r in rows if r["run"] == "baseline"}
    asked = [r for r in on if r["calls"] > 0]
    print(f"questions {len(on)}, the model asked on {len(asked)}, escalated {len(esc)}")
    print("diagnoses:", dict(Counter(r["diagnosis"] for r in esc)))
    print("actions:", dict(Counter((r["action"] or "").split(",")[0] for r in esc)))
    print("retry passed the checks:", sum(r["retry_rejected"] is False for r in esc), "of", len(esc))
    print("published as the model's answer: after escalation", sum(r["published"] == "model" for r in esc),
          "| baseline", sum(base[r["question"]]["published"] == "model" for r in esc if r["question"] in base))
    answerable = [r for r in esc if r["kind"] not in ("none", "squad-none")]
    print("correct with citation (answerable escalated):", sum(r["correct"] for r in answerable), "/", len(answerable),
          "| baseline", sum(base[r["question"]]["correct"] for r in answerable if r["question"] in base))

    def mean(xs):
        return round(sum(xs) / len(xs), 1) if xs else 0

    for label, rs in (("escalated (with)", esc), ("escalated (baseline)", [base[r["question"]] for r in esc if r["question"] in base]),
                      ("all asked with escalation", asked)):
        print(f"{label}: s/question {mean([r['seconds'] for r in rs])}, calls {mean([r['calls'] for r in rs])}, "
              f"tokens {mean([r['tokens'] for r in rs])}")
    print("| kind | question | diagnosis | action | outcome | published (baseline) | correct (baseline) | s (baseline) | calls (baseline) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in esc:
        b = base.get(r["question"], {})
        print(f"| {r['kind']} | {r['question'][:60]} | {r['diagnosis']} | {r['action']} | {r['outcome']} | "
              f"{r['published']} ({b.get('published')}) | {int(r['correct'])} ({int(bool(b.get('correct')))}) | "
              f"{r['seconds']} ({b.get('seconds')}) | {r['calls']} ({b.get('calls')}) |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scripted", action="store_true")
    ap.add_argument("--llm", default="")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--review-rounds", type=int, default=1)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--abstain", type=float, default=None, help="answer.abstain_threshold (the evidence gate)")
    ap.add_argument("--gated", default="", help="a rows file: only the questions its run answered with no model call")
    ap.add_argument("--hard", action="store_true", help="add the hand-written questions a small model fails (HARD)")
    ap.add_argument("--hard-only", action="store_true", help="with --hard: only those")
    ap.add_argument("--out", default=str(WORK / "rows.jsonl"))
    ap.add_argument("--report", action="store_true", help="only summarise the rows of --out")
    args = ap.parse_args()
    if args.scripted:
        report_scripted(run_scripted())
    if args.report:
        report_real([json.loads(x) for x in Path(args.out).read_text(encoding="utf-8").splitlines() if x.strip()])
    elif args.llm:
        report_real(run_real(args))


if __name__ == "__main__":
    main()
