"""Relevance calibration and answerability on the SQuAD 2.0 subset, for every search mode in one run.

    python benchmarks/relevance.py [multilingual-e5-small]

Ingests the 8 articles (real pipeline, bundled embedder), asks all 3,022 questions in each
mode (bm25, dense, hybrid) and reports:
- gold-paragraph recall@5 for the 1,392 answerable questions (a hit counts when its chunk holds
  the question's paragraph);
- how well the top hit's evidence separates answerable from unanswerable questions (ROC AUC),
  with the logistic calibration fitted per mode (two-fold by article, so the AUC and accuracy
  are measured on articles the fit did not see; the shipped constants are then fitted on all);
- accuracy of `low_relevance` at the shipped threshold 0.5 against the always-"answerable" baseline.
SQuAD 2.0's unanswerable questions were written against the same paragraph as answerable ones,
so retrieval scores can separate them only weakly: this measures that honestly.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from docqa.embed import make_embedder
from docqa.kb import KnowledgeBase
from docqa.retrieve.fusion import Calibration
from docqa.settings import Settings

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data")) / "qa" / "squad2-dev-subset"
WORK = HERE / ".work" / "squad2"
MODES = ("bm25", "dense", "hybrid")


def paragraphs(article: Path) -> list[str]:
    blocks = [b.strip() for b in article.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    return blocks[1:]  # the first block is the "# Title" heading


def features(hit, mode: str) -> list[float]:
    cos = hit.dense_score if hit.dense_score is not None else 0.0
    bm25 = math.log1p(max(hit.bm25_score or 0.0, 0.0))
    return {"bm25": [bm25], "dense": [cos], "hybrid": [cos, bm25]}[mode]


def fit_logistic(x: np.ndarray, y: np.ndarray, iters: int = 50) -> np.ndarray:
    """Weights (features..., bias) by Newton's method with a tiny ridge.

    The classes are weighted equally, so p = 0.5 is the boundary that maximises balanced
    accuracy (separation), not one tilted towards the more frequent class."""
    X = np.hstack([x, np.ones((len(x), 1))])
    weight = np.where(y == 1, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))
    w = np.zeros(X.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-X @ w))
        grad = X.T @ (weight * (p - y)) + 1e-3 * w
        hess = (X * (weight * p * (1 - p))[:, None]).T @ X + 1e-3 * np.eye(X.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))


def balanced(scores: np.ndarray, y: np.ndarray, threshold: float = 0.5) -> float:
    """Mean of the recall on answerable and on unanswerable questions at a threshold."""
    said = scores >= threshold
    return float((said[y == 1].mean() + (~said[y == 0]).mean()) / 2)


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = y == 1
    return float((ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum()))


def out_of_domain(n: int = 150) -> list[str]:
    """Questions no SQuAD article answers: SciFact claims (English) and CMRC questions (Chinese)."""
    out = []
    for name in ("scifact", "cmrc2018-dev"):
        path = DATA.parents[1] / "retrieval" / name / "queries.jsonl"
        out += [json.loads(line)["text"] for line in path.open(encoding="utf-8")][:n]
    return out


def main() -> None:
    questions = [json.loads(line) for line in (DATA / "questions.jsonl").open(encoding="utf-8")]
    gold = {a.name: paragraphs(a) for a in sorted((DATA / "docs").glob("*.md"))}
    WORK.mkdir(parents=True, exist_ok=True)
    db = WORK / "kb.db"
    for stale in WORK.glob("kb.db*"):
        stale.unlink()
    model = sys.argv[1] if len(sys.argv) > 1 else ""
    embedder = make_embedder("local", model)
    with KnowledgeBase(Settings(kb=str(db), embed={"provider": "local", "model": model}), embedder=embedder) as kb:
        kb.add([DATA / "docs"])
        print(f"{len(questions)} questions, {kb.status.stats()['chunks']} chunks; embedder {embedder.fingerprint.key}")
        rows = {m: [] for m in MODES}
        latency = {m: [] for m in MODES}
        for q in questions:
            para = gold[q["article"]][q["paragraph"]]
            for mode in MODES:
                t = time.perf_counter()
                hits = kb.search(q["question"], top_k=5, mode=mode)
                latency[mode].append((time.perf_counter() - t) * 1000)
                found = any(para[:80] in h.text or h.text[:80] in para for h in hits if Path(h.path).name == q["article"])
                rows[mode].append((q, found, features(hits[0], mode) if hits else None, hits[0].score if hits else 0.0))
        off_topic = out_of_domain()
        flagged = {m: sum(kb.search(q, top_k=5, mode=m).low_relevance for q in off_topic) / len(off_topic) for m in MODES}
    print("\n| mode | recall@5 (answerable) | AUC top evidence, 2-fold | balanced accuracy at 0.5, 2-fold | shipped score: AUC / balanced accuracy at 0.5 | p50 ms |")
    print("|---|---|---|---|---|---|")
    base = sum(q["is_impossible"] for q in questions) / len(questions)
    fitted = {}
    for mode in MODES:
        data = [(q, f, x, s) for q, f, x, s in rows[mode] if x is not None]
        y = np.array([0.0 if q["is_impossible"] else 1.0 for q, *_ in data])
        x = np.array([feat for _, _, feat, _ in data])
        articles = sorted({q["article"] for q, *_ in data})
        fold = np.array([articles.index(q["article"]) % 2 for q, *_ in data])
        out = np.zeros(len(y))
        for k in (0, 1):
            w = fit_logistic(x[fold != k], y[fold != k])
            out[fold == k] = predict(w, x[fold == k])
        fitted[mode] = fit_logistic(x, y)
        shipped = np.array([s for *_, s in data])
        answerable = [f for q, f, _, _ in rows[mode] if not q["is_impossible"]]
        print(f"| {mode} | {sum(answerable) / len(answerable):.3f} | {auc(out, y):.3f} | {balanced(out, y):.3f} "
              f"| {auc(shipped, y):.3f} / {balanced(shipped, y):.3f} | {statistics.median(latency[mode]):.1f} |")
    print(f"\nbalanced accuracy of always 'answerable' or always 'not found': 0.500 (plain accuracy {1 - base:.3f} / {base:.3f})")
    print(f"out-of-domain questions ({len(off_topic)}: SciFact claims and CMRC Chinese questions asked of these "
          "articles) flagged low_relevance with the shipped constants: " + ", ".join(f"{m} {v:.1%}" for m, v in flagged.items()))
    print("\nfitted on all questions (bm25 and dense go into retrieve/retriever.py CALIBRATIONS; the shipped hybrid"
          " score is the larger of those two, the joint hybrid fit below is the reference it is compared with):")
    for mode, w in fitted.items():
        cos = w[0] if mode in ("dense", "hybrid") else 0.0
        bm25 = w[-2] if mode in ("bm25", "hybrid") else 0.0
        print(f'    ("{mode}", ...): {Calibration(cos=round(float(cos), 3), bm25=round(float(bm25), 3), bias=round(float(w[-1]), 3))},')


if __name__ == "__main__":
    main()
