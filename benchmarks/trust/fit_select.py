"""Fit the extractive answerer's sentence ranking (docqa.answer.extractive.SELECT_MODEL) on the trust dev split.

    python benchmarks/trust/fit_select.py dump --corpus DIR --kb KB [--split dev] [--hits 10] --out cands.jsonl
    python benchmarks/trust/fit_select.py fit cands.jsonl [--hits 5] [--l2 1.0]

`dump` retrieves each answerable question's passages as the pipeline does (the first `--hits` hits, flagged
sources left out) and writes every candidate sentence with its `selection_features` and its label: *right* when
it lies in an evidence file and overlaps a gold quote or holds a string of every answers group (stages.py's
rule).  `fit` fits P(right) = sigmoid(bias + w . features) by Newton's method (L2 `--l2`, balanced per
question: each question's candidates weigh as much as another's), prints the weights, and measures, held out
by documentation set (the model fitted on the other sets), how often the best-scored sentence is right and a
right one is among the three best, against the current weights (as they are: in sample, since they were fitted on
this split; and their features refitted held out the same way).  Tune on dev only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import evaluate  # noqa: E402  (beside this file)
import stages  # noqa: E402

from docqa.answer import extractive, guard, pipeline  # noqa: E402
from docqa.answer.sources import fit as fit_sources  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.retrieve.weights import term_weights  # noqa: E402
from docqa.settings import Settings  # noqa: E402
from docqa.text.segment import query_terms  # noqa: E402


def dump(args) -> None:
    settings = Settings(kb=args.kb, llm={"provider": "none"})
    extractive.SELECT_HEADED = True  # every feature the ranking may weigh, `dense_headed` too (`fit --drop` leaves one out)
    questions = [q for q in evaluate.load_questions(sorted(HERE.glob("questions_*.jsonl")))
                 if q["answerable"] and (args.split == "all" or q["split"] == args.split)]
    with KnowledgeBase(settings) as kb, open(args.out, "w", encoding="utf-8") as fp:
        corpus = evaluate.Corpus(kb, Path(args.corpus))
        lib = kb.answers.library()
        for q in questions:
            hits = lib.search(q["question"], args.hits, None)
            sources = fit_sources(guard.evidence(list(hits)), 10**9)
            pipeline.read_above(sources, q["question"], lib)  # a release heading above a chunk, as the pipeline reads it
            pipeline.read_beside(sources, lib)  # the chunks next to the first hits (pipeline.BESIDE_HITS), as it reads them
            candidates = extractive._candidates(sources, args.hits, q["question"])  # table rows, lists, option labels: as extract()
            if not candidates:
                continue
            terms = query_terms(q["question"])
            extractive.rank(q["question"], candidates, sources, term_weights(lib.term_counts, terms), lib.embed)
            golds = corpus.golds(q)
            for s in candidates:
                source = sources.get(s.n)
                hit = source.hit
                label = stages.right(corpus.file_of(hit.path), hit.char_start + s.start, hit.char_start + s.end, s.text, q, golds)
                fp.write(json.dumps({"id": q["id"], "docset": q["docset"], "lang": q["lang"], "n": s.n, "beside": source.beside, "label": label,
                                     "score": s.score, "features": s.features, "text": s.text[:200]}, ensure_ascii=False) + "\n")


def newton(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float, steps: int = 30) -> np.ndarray:
    """Weighted L2 logistic regression (the last column of x is the bias, not penalised)."""
    beta = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + reg * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def fit(args) -> None:
    rows = [json.loads(line) for line in Path(args.cands).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if (r.get("beside") or r["n"]) <= args.hits]  # a chunk read beside a hit counts as that hit
    names = [k for k in rows[0]["features"] if k not in set(args.drop.split(","))]
    x = np.array([[r["features"][k] for k in names] + [1.0] for r in rows])
    y = np.array([float(r["label"]) for r in rows])
    per_q: dict[str, int] = defaultdict(int)
    for r in rows:
        per_q[r["id"]] += 1
    w = np.array([1.0 / per_q[r["id"]] for r in rows]) * len(per_q)
    beta = newton(x, y, w, args.l2)
    print("weights (all dev):", json.dumps({k: round(float(b), 3) for k, b in zip([*names, "bias"], beta)}))
    # the current weights were fitted on this split: scored as they are, they are in sample; held out like with like,
    # the current model's features are refitted on the other documentation sets the same way
    shipped = [i for i, k in enumerate(names) if k in extractive.SELECT_MODEL] + [len(names)]
    report(rows, {"current weights (in sample)": np.array([r["score"] for r in rows]),
                  "current features, held out": held_out(rows, x[:, shipped], y, w, args.l2),
                  "held out": held_out(rows, x, y, w, args.l2), "fitted (in sample)": x @ beta})


def held_out(rows: list[dict], x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> np.ndarray:
    """Each candidate's score under the model fitted on the other documentation sets."""
    held = np.zeros(len(rows))
    for d in sorted({r["docset"] for r in rows}):
        mask = np.array([r["docset"] == d for r in rows])
        held[mask] = x[mask] @ newton(x[~mask], y[~mask], w[~mask], l2)
    return held


def report(rows: list[dict], scores: dict[str, np.ndarray]) -> None:
    by_q: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_q[r["id"]].append(i)
    any_right = sum(any(rows[i]["label"] for i in idx) for idx in by_q.values())
    print(f"questions {len(by_q)}, with a right candidate {any_right}")
    for name, sc in scores.items():
        top1 = top3 = 0
        lang = defaultdict(lambda: [0, 0])
        for idx in by_q.values():
            order = sorted(idx, key=lambda i: -sc[i])
            t1, t3 = rows[order[0]]["label"], any(rows[i]["label"] for i in order[:3])
            top1 += t1
            top3 += t3
            lang[rows[order[0]]["lang"]][0] += t3
            lang[rows[order[0]]["lang"]][1] += 1
        print(f"  {name}: rank 1 {top1}, top 3 {top3}  " + " ".join(f"{k} top3 {v[0]}/{v[1]}" for k, v in sorted(lang.items())))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--corpus", default=str(evaluate.WORK / "corpus"))
    d.add_argument("--kb", default=str(evaluate.WORK / "kb.db"))
    d.add_argument("--split", default="dev", choices=["dev", "test", "valid", "all"])
    d.add_argument("--hits", type=int, default=10)
    d.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("cands")
    f.add_argument("--hits", type=int, default=5, help="candidates from the first N hits only")
    f.add_argument("--l2", type=float, default=1.0)
    f.add_argument("--drop", default="", help="features left out (comma-separated)")
    args = ap.parse_args(argv)
    dump(args) if args.cmd == "dump" else fit(args)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
