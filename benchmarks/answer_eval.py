"""Answer quality on the SQuAD 2.0 subset: `docqa eval` over the 8 ingested articles.

    python benchmarks/answer_eval.py [--limit N] [--llm BASE_URL --model NAME] [--no-check]
    python benchmarks/answer_eval.py --cmrc N [--dump F.jsonl]

--cmrc N measures the same on CMRC 2018 dev (Chinese, ../shared/data/retrieval/cmrc2018-dev) instead: N paragraphs,
one Markdown file each, are ingested and their questions asked (answerable), with the questions of N other paragraphs
that are not ingested (unanswerable: the documents do not hold them); paragraphs drawn with a fixed seed.  The dump's
rows carry `"source": "cmrc"`, so benchmarks/trust/fit_decision.py and refit_kind.py can fit on them.

Without --llm it measures the extractive answerer (no model): it runs once with the abstain
threshold at 0, so the same run gives the trade-off between answering and abstaining over a
range of thresholds; the shipped threshold's row is the headline.  With --llm it runs the
whole pipeline (generate → cite → check) against an OpenAI-compatible server, e.g. the local
Qwen2.5-Coder-1.5B served by `docqa model serve`; --limit takes an even sample of the questions.

The extractive answerer's evidence is a small logistic model (src/docqa/answer/extractive.py).
Every extractive run also refits it on the run's own evidence features, 2-fold by article (fit on
half of the articles, score the other half), and prints those held-out figures next to the
shipped model's; --fit prints the coefficients fitted on all the questions, to ship (with
--no-embed: BM25-only search and no dense feature, the model used when no embedder is configured).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
DATA = SHARED / "qa" / "squad2-dev-subset"
CMRC = SHARED / "retrieval" / "cmrc2018-dev"
WORK = HERE / ".work" / "answer_eval"

from docqa import evaluate  # noqa: E402
from docqa.answer import extractive, pipeline  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--llm", default="")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--mode", default="pipeline", choices=["pipeline", "agent", "auto"], help="answer mode (with --llm)")
    ap.add_argument("--top-k", type=int, default=0, help="sources given to the model (default: the setting)")
    ap.add_argument("--reuse", action="store_true", help="keep the ingested knowledge base from the last run")
    ap.add_argument("--fit", action="store_true", help="print the evidence model fitted on all the questions")
    ap.add_argument("--dump", default="", help="write each question's evidence features and outcome to this JSONL "
                    "(benchmarks/trust/fit_decision.py fits the decision on it with the trust dev set)")
    ap.add_argument("--no-embed", action="store_true", help="no embedder: BM25-only search, evidence without the dense feature")
    ap.add_argument("--cmrc", type=int, default=0, metavar="N",
                    help="CMRC 2018 dev instead of SQuAD: N paragraphs ingested and asked, the questions of N others unanswerable")
    args = ap.parse_args()
    work = WORK / "cmrc" if args.cmrc else WORK
    work.mkdir(parents=True, exist_ok=True)
    db = work / "kb.db"
    if not args.reuse:
        for stale in work.glob("kb.db*"):
            stale.unlink()
    llm = {"provider": "openai", "base_url": args.llm, "model": args.model, "max_tokens": 256, "context_window": 4096,
           "timeout": 900, "temperature": 0.0} if args.llm else {"provider": "none"}
    answer = {"abstain_threshold": 0.0} if not args.llm else {}
    if args.top_k:
        answer["top_k"] = args.top_k
    settings = Settings(kb=str(db), llm=llm, answer=answer,
                        **({"embed": {"provider": "none"}} if args.no_embed else {}))
    shipped = Settings().answer.abstain_threshold
    docs, items = cmrc_set(work, args.cmrc) if args.cmrc else (DATA / "docs", evaluate.load(DATA / "questions.jsonl"))
    if args.limit:
        random.Random(7).shuffle(items)
        items = items[: args.limit]
    with KnowledgeBase(settings) as kb:
        if not args.reuse:
            kb.add([docs])
        t0 = time.perf_counter()
        last = [0.0]
        captured: list[dict[str, float] | None] = []  # the evidence features of each question, in order
        latest: list[dict[str, float] | None] = [None]
        real_extract = pipeline.extract

        def recording_extract(*a, **kw):
            result = real_extract(*a, **kw)
            latest[0] = result.features
            return result

        pipeline.extract = recording_extract

        def progress(done: int, total: int) -> None:
            captured.append(latest[0])
            latest[0] = None
            if time.perf_counter() - last[0] > 30 or done == total:
                last[0] = time.perf_counter()
                print(f"  {done}/{total} questions, {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)

        try:
            report = evaluate.run(kb, items, check=not args.no_check, progress=progress, mode=args.mode)
        finally:
            pipeline.extract = real_extract
        elapsed = time.perf_counter() - t0
    summary = report.summary()
    label = f"{args.mode} with {args.model} at {args.llm}" if args.llm else "extractive (no model)"
    print(f"## {label}: {len(items)} questions in {elapsed:.0f}s")
    if not args.llm:
        rows = report.tradeoff(sorted({x / 100 for x in range(20, 81, 5)} | {shipped}))
        print("\n| abstain threshold | answer accuracy (answerable) | abstention accuracy (unanswerable) |")
        print("|---|---|---|")
        for r in rows:
            mark = " (shipped)" if abs(r["threshold"] - shipped) < 1e-9 else ""
            print(f"| {r['threshold']:.3f}{mark} | {r['answer_accuracy']:.3f} | {r['abstention_accuracy']:.3f} |")
        at = next(r for r in rows if abs(r["threshold"] - shipped) < 1e-9)
        summary["at_shipped_threshold"] = at
        print("\nbaseline: always abstain = abstention 1.000, answer accuracy 0.000; never abstain (threshold 0):"
              f" answer accuracy {summary['answer_accuracy']:.3f}, abstention 0.000")
        summary["evidence_model"] = evidence_report(report, captured, shipped, args.fit)
        if args.dump:
            dump(Path(args.dump), report, captured, "cmrc" if args.cmrc else "squad2")
    print("\n" + json.dumps(summary, indent=2))


def cmrc_set(work: Path, paragraphs: int) -> tuple[Path, list[evaluate.Item]]:
    """CMRC 2018 dev as an answer-or-abstain set (module docstring): the folder of the `paragraphs` ingested paragraphs
    (`DEV_k.md`: the article's title as a heading, then the paragraph) and the questions, answerable and not."""
    if not CMRC.is_dir():
        raise SystemExit(f"{CMRC} is missing: --cmrc needs the CMRC 2018 dev set of ../shared/data (retrieval/cmrc2018-dev)")
    read = lambda name: [json.loads(x) for x in (CMRC / name).read_text(encoding="utf-8").splitlines() if x.strip()]  # noqa: E731
    corpus = read("corpus.jsonl")
    random.Random(7).shuffle(corpus)
    kept, held = corpus[:paragraphs], {d["_id"] for d in corpus[paragraphs: 2 * paragraphs]}
    docs = work / "docs"
    if docs.exists():
        for old in docs.glob("*.md"):
            old.unlink()
    docs.mkdir(parents=True, exist_ok=True)
    for d in kept:
        (docs / f"{d['_id']}.md").write_text(f"# {d['title']}\n\n{d['text']}\n", encoding="utf-8")
    answers = {a["query_id"]: a["answers"] for a in read("answers.jsonl")}
    ids = {d["_id"] for d in kept}
    items = []
    for q in read("queries.jsonl"):
        paragraph = q["_id"].rsplit("_QUERY_", 1)[0]
        if paragraph in ids or paragraph in held:
            impossible = paragraph in held
            items.append(evaluate.Item(q["text"], [] if impossible else answers[q["_id"]], impossible,
                                       None if impossible else "\x000", f"{paragraph}.md"))
    return docs, items


def dump(path: Path, report: evaluate.Report, captured: list[dict[str, float] | None], source: str = "squad2") -> None:
    """One line per question: its place in the run (`n`: --limit 200 asks the first 200 of --limit 900), its evidence
    features, whether it is answerable, and whether the answer published at threshold 0 holds the gold answer (the
    label of a calibrated decision), and whether it abstained at threshold 0 (`abstains`: by a rule of the answerer's
    own, so at every threshold).  A question with no sentence to judge has empty features (it abstains at any
    threshold; the fits skip it)."""
    with path.open("w", encoding="utf-8") as out:
        for n, (outcome, features) in enumerate(zip(report.outcomes, captured)):
            item = outcome.item
            out.write(json.dumps({"source": source, "n": n, "group": item.article, "answerable": not item.impossible,
                                  "correct": bool(outcome.contains_gold) and not item.impossible,
                                  # abstained at threshold 0 by a rule of the answerer's own: at every threshold
                                  "abstains": not outcome.answered,
                                  "features": features or {}}, ensure_ascii=False) + "\n")
    print(f"wrote {path}", file=sys.stderr)


# -- the evidence model: fit and held-out check ------------------------------------------------
def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iterations: int = 100) -> np.ndarray:
    """Logistic regression by Newton's method, classes weighted to count equally; returns
    coefficients with the bias last.  A little L2 (not on the bias) keeps it well-posed."""
    x1 = np.hstack([x, np.ones((len(x), 1))])
    sw = np.where(y, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))
    reg = l2 * np.eye(x1.shape[1])
    reg[-1, -1] = 0.0
    w = np.zeros(x1.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x1 @ w)))
        gradient = x1.T @ (sw * (p - y)) / len(y) + reg @ w
        hessian = (x1 * (sw * p * (1 - p))[:, None]).T @ x1 / len(y) + reg
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """Probability that an answerable question outscores an unanswerable one (ties count half)."""
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = score[order]
    i = 0
    while i < len(score):
        j = i
        while j + 1 < len(score) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n1, n0 = int(y.sum()), int((~y).sum())
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)) if n1 and n0 else float("nan")


def evidence_report(report: evaluate.Report, captured: list[dict[str, float] | None], shipped: float,
                    show_fit: bool) -> dict:
    """The shipped evidence model's AUC on this run, and a refit's held-out (2-fold by article) figures."""
    dense = any(f and "dense" in f for f in captured)
    # the decision's features this run records (without the embedder: no dense feature, no sentence ranking's)
    names = [k for k in extractive.EVIDENCE_FEATURES if any(f and k in f for f in captured)]
    keep = [i for i, f in enumerate(captured) if f and all(k in f for k in names) and report.outcomes[i].item.article]
    x = np.array([[captured[i][k] for k in names] for i in keep], dtype=float)
    outcomes = [report.outcomes[i] for i in keep]
    y = np.array([not o.item.impossible for o in outcomes])
    contains = np.array([o.contains_gold for o in outcomes])
    articles = sorted({o.item.article for o in outcomes})
    evidence = np.array([o.evidence for o in outcomes], dtype=float)
    out = {"features": names, "shipped_auc": round(auc(y, evidence), 4)}
    print(f"\n## evidence model: {len(keep)} questions; shipped model AUC {out['shipped_auc']:.4f} (in-sample on this set)")
    if len(articles) >= 2:
        fold = np.isin([o.item.article for o in outcomes], articles[0::2])  # alternate articles by name
        held = np.zeros(len(y))
        for train in (fold, ~fold):
            w = logistic(x[train], y[train])
            held[~train] = 1 / (1 + np.exp(-(x[~train] @ w[:-1] + w[-1])))
        out["held_out_auc"] = round(auc(y, held), 4)
        print(f"refit, held out 2-fold by article ({', '.join(articles[0::2])} | the rest): AUC {out['held_out_auc']:.4f}")
        print("\n| threshold (held-out refit) | answer accuracy | abstention accuracy |")
        print("|---|---|---|")
        rows = []
        for t in [x / 100 for x in range(30, 71, 5)]:
            row = {"threshold": t, "answer_accuracy": round(float(np.mean((held[y] >= t) & contains[y])), 4),
                   "abstention_accuracy": round(float(np.mean(held[~y] < t)), 4)}
            rows.append(row)
            print(f"| {t:.2f} | {row['answer_accuracy']:.3f} | {row['abstention_accuracy']:.3f} |")
        out["held_out_tradeoff"] = rows
        for target in (0.8,):  # the lowest threshold that reaches the target abstention
            t = float(np.quantile(held[~y], target))
            out[f"held_out_answer_at_abstention_{target}"] = round(float(np.mean((held[y] > t) & contains[y])), 4)
            print(f"held out, abstaining on {target:.0%} of the unanswerable: answer accuracy "
                  f"{out[f'held_out_answer_at_abstention_{target}']:.3f} (threshold {t:.3f})")
    if show_fit:
        w = logistic(x, y)
        out["fitted"] = {k: round(float(v), 3) for k, v in zip(names + ["bias"], w)}
        print(f"\n{'EVIDENCE_MODEL' if dense else 'EVIDENCE_MODEL_NO_DENSE'} = {out['fitted']}")
    return out


if __name__ == "__main__":
    main()
