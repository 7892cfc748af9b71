"""Where the extractive answerer loses an answerable question: retrieval, the candidate pool, or sentence ranking.

    python benchmarks/trust/stages.py --corpus DIR --kb KB [--split dev] [--threshold 0] [--out rows.jsonl]
    python benchmarks/trust/stages.py --report rows.jsonl [rows2.jsonl]   # the table of finished runs, side by side

Each answerable question of the split is asked as evaluate.py asks it (no chat model, the abstain threshold
`--threshold`, 0 by default so that every question is answered and the ranking is seen whole), and the
extractive answerer's call for the whole question is recorded.  A sentence or chunk is *right* when it lies in
one of the question's evidence files and either overlaps a gold quote (located in the indexed text) or holds
a string of every answers group (score.py's matching).  The stages, each the share of answerable questions:

- `chunk@k`: a right chunk among the first k hits of a search for the question (k = 5, 10, 20);
- `pool`: a right chunk among the hits whose sentences are candidates (what the answerer sees);
- `candidate`: a right sentence among the candidates;
- `rank 1` / `top 3`: the best-ranked sentence is right / one of the three best (the picks before shaping);
- `correct`: the published answer is correct and cited (evaluate.py's outcome).

A stage's loss is the questions right at the stage before and not at this one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import evaluate  # noqa: E402  (beside this file)
import score  # noqa: E402

from docqa.answer import pipeline  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

STAGES = ("chunk@5", "chunk@10", "chunk@20", "pool", "candidate", "top 3", "rank 1", "correct")


def right(file: str | None, start: int, end: int, text: str, q: dict, golds: list[score.Span]) -> bool:
    """The span [start, end) of `file` (text `text`) is right for q: in an evidence file, and overlapping a gold
    quote or holding a string of every answers group."""
    if file is None or file not in {e["file"] for e in q.get("evidence") or []}:
        return False
    groups = q.get("answers") or []
    if groups and all(score.matched_groups(text, groups)):
        return True
    return any(g.file == file and g.start is not None and g.start < end and start < g.end for g in golds)


class Recorder:
    """Wraps pipeline.extract: keeps the first call of a run (the whole question; parts come after)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self._extract = pipeline.extract

    def __call__(self, question, sources, *args, **kwargs):
        result = self._extract(question, sources, *args, **kwargs)
        self.calls.append((question, sources, result))
        return result


def stages(q: dict, kb: KnowledgeBase, corpus: evaluate.Corpus, call: tuple, outcome: str) -> dict:
    golds = corpus.golds(q)
    hits = kb.search(q["question"], 20)

    def chunk_right(hit) -> bool:
        return right(corpus.file_of(hit.path), hit.char_start, hit.char_end, hit.text, q, golds)

    chunk_ranks = [i for i, h in enumerate(hits, 1) if chunk_right(h)]
    _, sources, result = call

    def sentence_right(s) -> bool:
        hit = sources.get(s.n).hit
        return right(corpus.file_of(hit.path), hit.char_start + s.start, hit.char_start + s.end, s.text, q, golds)

    from docqa.answer import extractive

    hits_seen = extractive.SELECT_HITS if getattr(extractive, "SELECT_MODEL", None) else extractive._HITS
    read = getattr(extractive, "_read", None)  # the hits read and the chunks read beside them (Source.beside)
    pool = [x.hit for x in (read(sources, hits_seen) if read else sources.sources[:hits_seen])]
    ranked = sorted(result.candidates, key=lambda s: -s.score)
    cand_ranks = [i for i, s in enumerate(ranked, 1) if sentence_right(s)]
    picks = result.chosen or result.ranked
    picked = [sentence_right(s) for s in picks]
    return {
        "id": q["id"], "lang": q["lang"], "kind": q["kind"], "docset": q.get("docset"),
        "first_chunk": chunk_ranks[0] if chunk_ranks else None,
        "chunk@5": bool(chunk_ranks and chunk_ranks[0] <= 5), "chunk@10": bool(chunk_ranks and chunk_ranks[0] <= 10),
        "chunk@20": bool(chunk_ranks), "pool": any(chunk_right(h) for h in pool),
        "candidate": bool(cand_ranks), "first_candidate": cand_ranks[0] if cand_ranks else None,
        "candidates": len(ranked), "top 3": any(picked[:3]), "rank 1": bool(picked[:1] and picked[0]),
        "correct": outcome == "correct", "outcome": outcome, "evidence": round(result.evidence, 4),
        "picks": [s.text[:160] for s in picks[:3]],
    }


def table(rows_by_run: dict[str, list[dict]]) -> None:
    names = list(rows_by_run)
    print("| stage | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for stage in STAGES:
        cells = []
        for name in names:
            rows = rows_by_run[name]
            k = sum(r[stage] for r in rows)
            cells.append(f"{k / len(rows):.0%} ({k}/{len(rows)})")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    for name in names:
        rows = rows_by_run[name]
        losses = {}
        before = None
        for stage in ("chunk@20", "pool", "candidate", "top 3", "rank 1"):
            if before is not None:
                losses[f"{before} -> {stage}"] = sum(r[before] and not r[stage] for r in rows)
            before = stage
        losses["top 3 -> correct"] = sum(r["top 3"] and not r["correct"] for r in rows)
        print(f"\n{name}: lost between stages: " + ", ".join(f"{k} {v}" for k, v in losses.items()))
        for lang in ("en", "zh"):
            sub = [r for r in rows if r["lang"] == lang]
            if sub:
                print(f"  {lang} ({len(sub)}): " + ", ".join(f"{s} {sum(r[s] for r in sub)}" for s in STAGES))


def run(args) -> Path:
    settings = Settings(kb=args.kb, llm={"provider": "none"}, answer={"abstain_threshold": args.threshold})
    questions = [q for q in evaluate.load_questions(sorted(HERE.glob("questions_*.jsonl")))
                 if q["answerable"] and (args.split == "all" or q["split"] == args.split)]
    if args.ids:
        wanted = set(args.ids.split(","))
        questions = [q for q in questions if q["id"] in wanted]
    if args.limit:
        questions = questions[: args.limit]
    recorder = Recorder()
    pipeline.extract = recorder  # type: ignore[assignment]
    out = Path(args.out)
    t0 = time.perf_counter()
    with KnowledgeBase(settings) as kb, open(out, "w", encoding="utf-8") as fp:
        corpus = evaluate.Corpus(kb, Path(args.corpus))
        kb.models.warm()
        for q in questions:
            recorder.calls.clear()
            answer, seconds, trace = evaluate.ask(kb, q["question"], None)
            outcome = evaluate.row(q, answer, seconds, trace, corpus, "extractive")["outcome"]
            if not recorder.calls:
                continue
            r = stages(q, kb, corpus, recorder.calls[0], outcome)
            r["seconds"] = round(seconds, 3)
            fp.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(questions)} questions in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(evaluate.WORK / "corpus"))
    ap.add_argument("--kb", default=str(evaluate.WORK / "kb.db"))
    ap.add_argument("--split", default="dev", choices=["dev", "test", "valid", "all"])
    ap.add_argument("--threshold", type=float, default=0.0, help="the abstain threshold (0: every question answered)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    ap.add_argument("--out", default=str(evaluate.WORK / "stages.jsonl"))
    ap.add_argument("--report", nargs="+", metavar="ROWS")
    args = ap.parse_args(argv)
    paths = [Path(p) for p in args.report] if args.report else [run(args)]
    table({p.stem: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()] for p in paths})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
