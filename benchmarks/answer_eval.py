"""Answer quality on the SQuAD 2.0 subset: `docqa eval` over the 8 ingested articles.

    python benchmarks/answer_eval.py [--limit N] [--llm BASE_URL --model NAME] [--no-check]

Without --llm it measures the extractive answerer (no model): it runs once with the abstain
threshold at 0, so the same run gives the trade-off between answering and abstaining over a
range of thresholds; the shipped threshold's row is the headline.  With --llm it runs the
whole pipeline (generate → cite → check) against an OpenAI-compatible server, e.g. the local
Qwen2.5-Coder-1.5B served by tools/local_llm.py; --limit takes an even sample of the questions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data")) / "qa" / "squad2-dev-subset"
WORK = HERE / ".work" / "answer_eval"

from docqa import evaluate  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--llm", default="")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="keep the ingested knowledge base from the last run")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    db = WORK / "kb.db"
    if not args.reuse:
        for stale in WORK.glob("kb.db*"):
            stale.unlink()
    llm = {"provider": "openai", "base_url": args.llm, "model": args.model, "max_tokens": 256, "context_window": 4096} \
        if args.llm else {"provider": "none"}
    settings = Settings(kb=str(db), llm=llm, answer={"abstain_threshold": 0.0} if not args.llm else {})
    shipped = Settings().answer.abstain_threshold
    items = evaluate.load(DATA / "questions.jsonl")
    if args.limit:
        random.Random(7).shuffle(items)
        items = items[: args.limit]
    with KnowledgeBase(settings) as kb:
        if not args.reuse:
            kb.add([DATA / "docs"])
        t0 = time.perf_counter()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.perf_counter() - last[0] > 30 or done == total:
                last[0] = time.perf_counter()
                print(f"  {done}/{total} questions, {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)

        report = evaluate.run(kb, items, check=not args.no_check, progress=progress)
        elapsed = time.perf_counter() - t0
    summary = report.summary()
    label = f"pipeline with {args.model} at {args.llm}" if args.llm else "extractive (no model)"
    print(f"## {label}: {len(items)} questions in {elapsed:.0f}s")
    if not args.llm:
        rows = report.tradeoff([x / 100 for x in range(20, 81, 5)])
        print("\n| abstain threshold | answer accuracy (answerable) | abstention accuracy (unanswerable) |")
        print("|---|---|---|")
        for r in rows:
            mark = " (shipped)" if abs(r["threshold"] - shipped) < 1e-9 else ""
            print(f"| {r['threshold']:.2f}{mark} | {r['answer_accuracy']:.3f} | {r['abstention_accuracy']:.3f} |")
        at = next(r for r in rows if abs(r["threshold"] - shipped) < 1e-9)
        summary["at_shipped_threshold"] = at
        print("\nbaseline: always abstain = abstention 1.000, answer accuracy 0.000; never abstain (threshold 0):"
              f" answer accuracy {summary['answer_accuracy']:.3f}, abstention 0.000")
    print("\n" + json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
