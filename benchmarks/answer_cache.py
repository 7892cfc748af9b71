"""Repeated questions answered from earlier verified answers (issue 17, item 4): hit rate and latency
on a replay, with the answers asked afresh as the baseline in the same run.

    python benchmarks/answer_cache.py [--questions 40] [--seed 17]

The knowledge base holds the SQuAD 2.0 subset's eight articles (../shared/data).  Answers come from the
extractive answerer (no chat model: every run is reproducible and VERIFIED when it answers).  The
replay asks each sampled question once (a miss, by definition), then again in three forms — the same
text, a variant (lower case, no question mark, extra spaces) and a paraphrase ("Can you tell me …") —
and asks, as distractors, other questions about the same articles (a recall there is a false hit
unless it is the same question).  Then one cited article is edited and re-added: every earlier
answer citing it must be retired (asked again, none may be recalled).  Figures: hits per form,
false hits, retired answers recalled (goal 0), and the median and p95 latency of a recalled answer
and of the same question asked afresh (`fresh=True`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
SQUAD = DATA / "qa" / "squad2-dev-subset"
WORK = HERE / ".work" / "answer_cache"


def forms(question: str) -> dict[str, str]:
    body = question.rstrip("?").strip()
    return {"same": question, "variant": "  " + body.lower() + "  ",
            "paraphrase": "Can you tell me " + body[0].lower() + body[1:] + "?"}


def timed(kb, question: str, **options):
    t0 = time.perf_counter()
    answer = kb.ask(question, mode="pipeline", **options)
    return answer, (time.perf_counter() - t0) * 1000


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()
    if not SQUAD.is_dir():
        sys.exit(f"{SQUAD} is not present (the shared benchmark data)")
    from docqa.embed.local import LocalEmbedder
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    shutil.rmtree(WORK, ignore_errors=True)
    docs = WORK / "docs"
    shutil.copytree(SQUAD / "docs", docs)
    rows = [json.loads(line) for line in (SQUAD / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    answerable = [r for r in rows if not r["is_impossible"]]
    rng = random.Random(args.seed)
    rng.shuffle(answerable)
    settings = Settings(kb=str(WORK / "kb.db"), llm={"provider": "none"}, answer={"recall": True})
    with KnowledgeBase(settings, embedder=LocalEmbedder(), chat_model=None) as kb:
        kb.add([docs])
        kb.ask("warm up the embedder", mode="pipeline", record=False)
        first, hits, recall_ms, fresh_ms = [], {"same": 0, "variant": 0, "paraphrase": 0}, [], []
        for q in answerable:
            if len(first) >= args.questions:
                break
            answer, _ = timed(kb, q["question"])
            if answer.verification.status == "VERIFIED" and answer.answerable:
                first.append((q, answer))
        asked = {q["question"] for q, _ in first}
        for q, _earlier in first:
            for form, text in forms(q["question"]).items():
                again, ms = timed(kb, text)
                if again.retrieval.recalled_from:
                    hits[form] += 1
                    recall_ms.append(ms)
            _, ms = timed(kb, q["question"], fresh=True)
            fresh_ms.append(ms)
        distractors = [r for r in answerable if r["question"] not in asked][: len(first)]
        false_hits = 0
        for q in distractors:
            again, _ = timed(kb, q["question"])
            if again.retrieval.recalled_from:
                source = kb.log.run(again.retrieval.recalled_from).question
                false_hits += source.strip().lower() != q["question"].strip().lower()
        # edit the most cited article: every answer citing it retires
        cited = [c.path for _, a in first for c in a.citations]
        target = max(set(cited), key=cited.count)
        Path(target).write_text(Path(target).read_text(encoding="utf-8") + "\n\nAn added closing paragraph.\n",
                                encoding="utf-8")
        kb.add([docs])
        affected = [(q, a) for q, a in first if any(c.path == target for c in a.citations)]
        stale = sum(bool(timed(kb, q["question"])[0].retrieval.recalled_from == a.run_id) for q, a in affected)
    n = len(first)
    print(f"## answer recall replay: {n} questions answered and VERIFIED first, each repeated in 3 forms; "
          f"{len(distractors)} distractors\n")
    print("| form | recalled | rate |")
    print("|---|---|---|")
    for form, k in hits.items():
        print(f"| {form} | {k}/{n} | {k / max(n, 1):.0%} |")
    print(f"\nfalse hits on distractor questions: {false_hits}/{len(distractors)}")
    print(f"answers citing the edited article {Path(target).name}: {len(affected)}; recalled after the edit: {stale}")
    print(f"latency, recalled answer: median {pct(recall_ms, 0.5)} ms, p95 {pct(recall_ms, 0.95)} ms "
          f"(n={len(recall_ms)})")
    print(f"latency, asked afresh (extractive, baseline): median {pct(fresh_ms, 0.5)} ms, p95 {pct(fresh_ms, 0.95)} ms "
          f"(n={len(fresh_ms)})")
    if recall_ms and fresh_ms:
        print(f"speed-up (median): {statistics.median(fresh_ms) / statistics.median(recall_ms):.1f}x")


if __name__ == "__main__":
    main()
