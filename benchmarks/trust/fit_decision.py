"""Fit the one answer-or-abstain decision (docqa.answer.answerability) and check it on held-out data.

    python benchmarks/trust/fit_decision.py DUMP.jsonl [DUMP.jsonl ...] [--threshold T] [--write]

Each DUMP line is one question asked at abstain threshold 0 (so that every question's best sentences
are published and scored): `{"source", "group", "split", "answerable", "correct", "features"}` —
written by `benchmarks/trust/evaluate.py --dump` (the trust dev set; `split` dev or test) and by
`benchmarks/answer_eval.py --dump` (the SQuAD 2.0 subset, all of it counted as dev).

The label is `correct`: the question is answerable and the published sentences hold its answer (and,
for the trust set, are cited in its evidence file) — so the fitted probability is P(answering is
right), the number shown as the answer's confidence.  The fit is a logistic regression (Newton,
small L2) on the dev rows only; each source counts equally (SQuAD has more rows than the trust set).
Then, on the trust set's test split only: AUC, a reliability table (predicted against observed, by
band), and the share of answerable questions answered right and of unanswerable ones abstained at
the threshold — the threshold is chosen on dev (the lowest that abstains on at least 80 % of the
unanswerable dev questions, or --threshold).  `--write` prints the coefficients to paste into
src/docqa/answer/extractive.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from answer_eval import auc  # noqa: E402

BANDS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


def load(paths: list[str], dense: bool) -> list[dict]:
    rows = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("features") and (("dense" in row["features"]) == dense):
                row.setdefault("split", "dev")
                rows.append(row)
    return rows


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1e-3, iterations: int = 100) -> np.ndarray:
    """Weighted logistic regression by Newton's method; coefficients with the bias last (no L2 on it)."""
    x1 = np.hstack([x, np.ones((len(x), 1))])
    reg = l2 * np.eye(x1.shape[1])
    reg[-1, -1] = 0.0
    beta = np.zeros(x1.shape[1])
    w = w / w.sum()
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x1 @ beta)))
        gradient = x1.T @ (w * (p - y)) + reg @ beta
        hessian = (x1 * (w * p * (1 - p))[:, None]).T @ x1 + reg
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return beta


def predict(x: np.ndarray, beta: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(x @ beta[:-1] + beta[-1])))


def matrix(rows: list[dict], names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[float(r["features"].get(k, 0.0)) for k in names] for r in rows], dtype=float)
    y = np.array([bool(r["correct"]) for r in rows])
    return x, y


def weights(rows: list[dict], share: dict[str, float]) -> np.ndarray:
    """Each source counts as its `share` (default 1) whatever its number of rows."""
    count: dict[str, int] = {}
    for r in rows:
        count[r["source"]] = count.get(r["source"], 0) + 1
    return np.array([share.get(r["source"], 1.0) / count[r["source"]] for r in rows])


def outcomes(rows: list[dict], p: np.ndarray, t: float) -> dict[str, float]:
    answerable = np.array([bool(r["answerable"]) for r in rows])
    correct = np.array([bool(r["correct"]) for r in rows])
    answered = p >= t
    return {
        "answerable": int(answerable.sum()), "unanswerable": int((~answerable).sum()),
        "answerable_right": round(float(np.mean(answered[answerable] & correct[answerable])), 3) if answerable.any() else float("nan"),
        "unanswerable_abstained": round(float(np.mean(~answered[~answerable])), 3) if (~answerable).any() else float("nan"),
        "answered_wrong": round(float(np.mean(answered[answerable] & ~correct[answerable])), 3) if answerable.any() else float("nan"),
    }


def reliability(p: np.ndarray, y: np.ndarray) -> list[tuple[str, int, float, float]]:
    out = []
    for lo, hi in zip(BANDS, BANDS[1:]):
        inside = (p >= lo) & (p < hi)
        if inside.any():
            out.append((f"{lo:.1f}–{min(hi, 1.0):.1f}", int(inside.sum()), float(p[inside].mean()), float(y[inside].mean())))
    return out


def choose_threshold(rows: list[dict], p: np.ndarray, target: float = 0.8) -> float:
    """The lowest threshold that abstains on `target` of the unanswerable questions (their quantile)."""
    unanswerable = np.array([not r["answerable"] for r in rows])
    return float(np.quantile(p[unanswerable], target)) if unanswerable.any() else 0.5


def cross_validated(dev: list[dict], names: list[str], share: dict[str, float]) -> float:
    """AUC on the trust dev rows, each half of its documentation sets predicted by a fit on the other half
    (and every other source): how a setting of the fit is chosen without looking at the test split."""
    groups = sorted({r["group"] for r in dev if r["source"] == "trust"})
    folds = (set(groups[0::2]), set(groups[1::2]))
    scores, labels = [], []
    for held in folds:
        train = [r for r in dev if not (r["source"] == "trust" and r["group"] in held)]
        tested = [r for r in dev if r["source"] == "trust" and r["group"] in held]
        x, y = matrix(train, names)
        beta = fit(x, y, weights(train, share))
        tx, ty = matrix(tested, names)
        scores += list(predict(tx, beta))
        labels += list(ty)
    return auc(np.array(labels), np.array(scores))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--no-dense", action="store_true", help="the model for knowledge bases without an embedder")
    ap.add_argument("--threshold", type=float, default=0.0, help="the abstain threshold (default: chosen on dev)")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--share", action="append", default=[], metavar="SOURCE=W",
                    help="how much a source counts against the others (default 1 each), e.g. squad2=0.25")
    args = ap.parse_args()
    rows = load(args.dumps, dense=not args.no_dense)
    names = sorted({k for r in rows for k in r["features"]})
    dev = [r for r in rows if r["split"] == "dev"]
    test = [r for r in rows if r["split"] == "test" and r["source"] == "trust"]
    trust_dev = [r for r in dev if r["source"] == "trust"]
    print(f"rows: dev {len(dev)} ({len(trust_dev)} trust), test {len(test)} (trust); features: {', '.join(names)}")
    x, y = matrix(dev, names)
    share = {k: float(v) for k, v in (item.split("=") for item in args.share)}
    print(f"dev, cross-validated by documentation set: AUC {cross_validated(dev, names, share):.3f}")
    beta = fit(x, y, weights(dev, share))
    for part, label in ((trust_dev, "trust dev (in-sample)"), (test, "trust test (held out)")):
        if not part:
            continue
        px, py = matrix(part, names)
        p = predict(px, beta)
        print(f"\n## {label}: {len(part)} questions, AUC {auc(py, p):.3f} (P(right) against right/wrong-or-unanswerable)")
        print("| band | questions | mean predicted | observed right |\n|---|---|---|---|")
        for band, n, mean, seen in reliability(p, py):
            print(f"| {band} | {n} | {mean:.2f} | {seen:.2f} |")
    dp = predict(matrix(trust_dev or dev, names)[0], beta)
    t = args.threshold or choose_threshold(trust_dev or dev, dp)
    print(f"\nthreshold {t:.3f} ({'given' if args.threshold else 'chosen on dev: abstains on 80 % of the unanswerable'})")
    for part, label in ((trust_dev, "trust dev"), (test, "trust test")):
        if part:
            print(f"{label}: {outcomes(part, predict(matrix(part, names)[0], beta), t)}")
    if args.write:
        model = {k: round(float(v), 3) for k, v in zip(names + ["bias"], beta)}
        print(f"\n{'EVIDENCE_MODEL_NO_DENSE' if args.no_dense else 'EVIDENCE_MODEL'} = {model}")
        print(f"EVIDENCE_FEATURES = {tuple(names)}")


if __name__ == "__main__":
    main()
