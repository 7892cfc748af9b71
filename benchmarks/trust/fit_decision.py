"""Fit the one answer-or-abstain decision (docqa.answer.answerability, decision.json) and check it on held-out data.

    python benchmarks/trust/fit_decision.py --collect --write [--install]   # run the harnesses, then fit (one command)
    python benchmarks/trust/fit_decision.py DUMP.jsonl [...] [--write]      # fit on runs made before

--collect asks every question at abstain threshold 0 (so that every question's best sentences are
published and scored), with the embedder and without it (BM25-only search, no dense feature):
`benchmarks/trust/evaluate.py --split all` over the trust corpus (--corpus, --kb, --kb-no-embed), the same
over each of its documentation sets in a knowledge base of its own (2 to 81 files: the decision must hold
over a small folder), and `benchmarks/answer_eval.py --limit 900 --dump` over the SQuAD 2.0 subset; the
runs go to --work (about 15 minutes on 2 cores, most of it the first build of the knowledge bases).  A DUMP
line is either a trust harness row (its `evidence_features`, `outcome`, `docset`, `split`) or an
answer_eval dump row (`{"source", "group", "answerable", "correct", "features"}`, all of it dev).

The label is `correct`: the question is answerable and the published sentences hold its answer (and,
for the trust set, are cited in its evidence file) — so the fitted probability is P(answering is
right), the number shown as the answer's confidence.  The fit is a logistic regression (Newton,
small L2) on the dev rows only; each source (trust, docset, squad2) counts as its --share (default 1 each,
whatever its number of rows).  The threshold is chosen on dev: the lowest that abstains on 80 % of the
trust dev near misses and on as many of the SQuAD unanswerable questions as the decision shipped before
(SQUAD_ABSTENTION, 0.60 of the 900); the confidence bands on dev too (`choose_bands`).  Then, on the trust set's test split only: AUC, a reliability
table (predicted against observed, by band), the share of answerable questions answered right and of
unanswerable ones abstained, and each confidence level's accuracy.

The runs compute their features as the candidate decision says (--candidate, default
benchmarks/trust/decision_refit.json: its `prior_chunks` and `lead_with_follower`; the harnesses run with
DOCQA_DECISION_FILE naming it).  `--write` writes the fitted model (coefficients, threshold, bands, the
figures) to the candidate file; `--install` makes it the shipped decision: src/docqa/answer/decision.json
and the default of `answer.abstain_threshold` in src/docqa/settings/model.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from answer_eval import auc  # noqa: E402

BANDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001)
DECISION = ROOT / "src" / "docqa" / "answer" / "decision.json"
SETTINGS = ROOT / "src" / "docqa" / "settings" / "model.py"
NEAR_MISSES = 0.8  # the share of the trust dev near misses the threshold abstains on
SQUAD_ABSTENTION = 0.6  # the SQuAD subset's (900) unanswerable questions abstained by the decision shipped before (at 0.5)
HIGH_ACCURACY = 0.6  # the least share right on dev of the answers at "high" and over


def collect(args: argparse.Namespace) -> list[str]:
    """Run the harnesses at abstain threshold 0, with and without the embedder; the paths of their rows."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DOCQA_ANSWER__ABSTAIN_THRESHOLD": "0", "DOCQA_DECISION_FILE": str(Path(args.candidate).resolve())}
    python = sys.executable
    runs = []
    for dense, kb in ((True, args.kb), (False, args.kb_no_embed)):
        tag = "" if dense else "-no-embed"
        extra = {} if dense else {"DOCQA_EMBED__PROVIDER": "none"}
        trust, squad = work / f"trust{tag}.jsonl", work / f"squad{tag}.jsonl"
        reuse = ["--reuse"] if Path(kb).exists() else []
        subprocess.run([python, str(HERE / "evaluate.py"), "--split", "all", "--corpus", args.corpus, "--kb", kb, *reuse,
                        "--out", str(trust)], env={**env, **extra}, check=True)
        subprocess.run([python, str(HERE.parent / "answer_eval.py"), "--limit", "900", "--dump", str(squad),
                        *([] if dense else ["--no-embed"])], env=env, check=True, stdout=subprocess.DEVNULL)
        runs += [str(trust), str(squad)]
        runs += [str(run) for run in docsets(args, work, tag, {**env, **extra})]
    return runs


def docsets(args: argparse.Namespace, work: Path, tag: str, env: dict[str, str]) -> list[Path]:
    """Each documentation set of the trust corpus in a knowledge base of its own (two files to eighty), asked its
    own questions: the decision must hold over a small folder as over a large collection."""
    import devset  # beside this file

    questions: dict[str, list[str]] = {}
    for path in sorted(HERE.glob("questions_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            if devset.split(q["id"]) != "valid":  # the validation split is never fitted on, nor asked here
                questions.setdefault(q["docset"], []).append(q["id"])
    runs = []
    for folder in sorted(p for p in Path(args.corpus).iterdir() if p.is_dir() and p.name in questions):
        own = work / "docsets" / folder.name
        corpus = own / "corpus"
        if not corpus.exists():
            (corpus / folder.name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(folder, corpus / folder.name)
        out = work / f"docset{tag}-{folder.name}.jsonl"
        subprocess.run([sys.executable, str(HERE / "evaluate.py"), "--split", "all", "--corpus", str(corpus),
                        "--kb", str(own / f"kb{tag}.db"), "--ids", ",".join(questions[folder.name]), "--out", str(out)],
                       env=env, check=True, stderr=subprocess.DEVNULL)
        runs.append(out)
    return runs


def load(paths: list[str], dense: bool) -> list[dict]:
    rows = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "evidence_features" in row:  # a trust harness row: over the whole corpus, or its docset's alone
                if not row["evidence_features"] or row["split"] == "valid":  # valid: never fitted on, nor reported here
                    continue
                row = {"source": "docset" if Path(path).name.startswith("docset") else "trust", "group": row["docset"], "split": row["split"], "answerable": row["answerable"],
                       "correct": row["outcome"] == "correct", "features": row["evidence_features"], "lang": row["lang"],
                       "abstains": row["outcome"] in ("abstained", "false_abstention")}  # at threshold 0: by a rule of its own
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
    answered = (p >= t) & ~np.array([bool(r.get("abstains", False)) for r in rows], dtype=bool)  # a rule's abstention holds
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


def cross_validated(dev: list[dict], names: list[str], share: dict[str, float]) -> float:
    """AUC on the trust dev rows, each half of its documentation sets predicted by a fit on the other half
    (and every other source): how a setting of the fit is chosen without looking at the test split."""
    groups = sorted({r["group"] for r in dev if r["source"] == "trust"})
    folds = (set(groups[0::2]), set(groups[1::2]))
    scores, labels = [], []
    for held in folds:
        train = [r for r in dev if not (r["source"] in ("trust", "docset") and r["group"] in held)]
        tested = [r for r in dev if r["source"] == "trust" and r["group"] in held]
        x, y = matrix(train, names)
        beta = fit(x, y, weights(train, share))
        tx, ty = matrix(tested, names)
        scores += list(predict(tx, beta))
        labels += list(ty)
    return auc(np.array(labels), np.array(scores))


def choose_threshold(trust_dev: list[dict], p: np.ndarray, squad: list[dict], ps: np.ndarray, near_misses: float = NEAR_MISSES) -> float:
    """The lowest threshold that abstains on `near_misses` of the trust dev near misses and on SQUAD_ABSTENTION of
    the SQuAD unanswerable questions (the quantiles of their probabilities)."""
    def quantile(rows: list[dict], q: np.ndarray, share: float) -> float:
        unanswerable = np.array([not r["answerable"] for r in rows], dtype=bool)
        return float(np.quantile(q[unanswerable], share)) if unanswerable.any() else 0.0
    return round(max(quantile(trust_dev, p, near_misses), quantile(squad, ps, SQUAD_ABSTENTION)), 3)


def choose_bands(p: np.ndarray, y: np.ndarray, threshold: float) -> dict[str, float]:
    """Each level's lowest probability, on dev: `high` the lowest at which the answers from there up were right
    at least HIGH_ACCURACY of the time (with at least five of them); `medium` the threshold, so that every answer
    published by default is medium or high; `low` is under the threshold (an answer shown only when the threshold
    is lowered, or a model's answer accepted on its checked claims)."""
    cuts = [c for c in np.round(np.arange(threshold, 1.0, 0.01), 2) if (p >= c).sum() >= 5 and y[p >= c].mean() >= HIGH_ACCURACY]
    return {"high": float(min(cuts)) if cuts else 1.0, "medium": threshold}


def levels(p: np.ndarray, y: np.ndarray, bands: dict[str, float]) -> dict[str, dict]:
    """Per confidence level, how many questions fall in it and the share answered right (every question answered:
    the runs are at abstain threshold 0, so `low` says how often an answer under the threshold is right)."""
    out = {}
    for level, lo, hi in (("high", bands["high"], 2.0), ("medium", bands["medium"], bands["high"]), ("low", 0.0, bands["medium"])):
        inside = (p >= lo) & (p < hi)
        out[level] = {"answers": int(inside.sum()), "right": int(y[inside].sum()),
                      "accuracy": round(float(y[inside].mean()), 3) if inside.any() else None}
    return out


def report(label: str, rows: list[dict], names: list[str], beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = matrix(rows, names)
    p = predict(x, beta)
    print(f"\n## {label}: {len(rows)} questions, AUC {auc(y, p):.3f} (P(right) against right/wrong-or-unanswerable)")
    print("| band | questions | mean predicted | observed right |\n|---|---|---|---|")
    for band, n, mean, seen in reliability(p, y):
        print(f"| {band} | {n} | {mean:.2f} | {seen:.2f} |")
    return p, y


def fit_one(rows: list[dict], share: dict[str, float], dense: bool, only: list[str] | None = None) -> dict:
    """One model (with the dense feature or without): coefficients, and its figures on dev and test; `only`
    restricts the features (those the rows hold)."""
    names = sorted({k for r in rows for k in r["features"]} & set(only or [k for r in rows for k in r["features"]]))
    dev = [r for r in rows if r["split"] == "dev"]
    test = [r for r in rows if r["split"] == "test" and r["source"] == "trust"]
    trust_dev = [r for r in dev if r["source"] == "trust"]
    squad = [r for r in dev if r["source"] == "squad2"]
    print(f"\n# {'with the embedder' if dense else 'no embedder'}: rows dev {len(dev)} ({len(trust_dev)} trust, {len(squad)} SQuAD), "
          f"test {len(test)} (trust); features: {', '.join(names)}")
    print(f"dev, cross-validated by documentation set: AUC {cross_validated(dev, names, share):.3f}")
    beta = fit(*matrix(dev, names), weights(dev, share))
    dp, dy = report("trust dev (in-sample)", trust_dev, names, beta)
    tp, ty = report("trust test (held out)", test, names, beta)
    sp = predict(matrix(squad, names)[0], beta)
    return {"names": names, "beta": beta, "dev": (trust_dev, dp, dy), "test": (test, tp, ty), "squad": (squad, sp)}


def sweep(m: dict, chosen: float) -> None:
    """The trust dev split and the SQuAD subset at thresholds around the chosen one (every question answered in
    the runs, so an answer is shown when its probability reaches the threshold)."""
    print("\n| threshold | dev right & cited | dev near misses abstained | SQuAD answerable right | SQuAD unanswerable abstained |")
    print("|---|---|---|---|---|")
    for t in sorted({round(float(c), 2) for c in np.arange(0.2, 0.71, 0.025)} | {chosen}):
        d, s = outcomes(m["dev"][0], m["dev"][1], t), outcomes(m["squad"][0], m["squad"][1], t)
        print(f"| {t:.3f} | {d['answerable_right']:.3f} | {d['unanswerable_abstained']:.3f} | {s['answerable_right']:.3f} | {s['unanswerable_abstained']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="*")
    ap.add_argument("--collect", action="store_true", help="run the harnesses first (at abstain threshold 0)")
    ap.add_argument("--corpus", default=str(ROOT / "benchmarks" / ".work" / "trust" / "corpus"))
    ap.add_argument("--kb", default=str(ROOT / "benchmarks" / ".work" / "trust" / "kb.db"))
    ap.add_argument("--kb-no-embed", default=str(ROOT / "benchmarks" / ".work" / "trust" / "kb-no-embed" / "kb.db"))
    ap.add_argument("--work", default=str(ROOT / "benchmarks" / ".work" / "decision"), help="where --collect writes its runs")
    ap.add_argument("--threshold", type=float, default=0.0, help="the abstain threshold (default: chosen on dev)")
    ap.add_argument("--candidate", default=str(HERE / "decision_refit.json"),
                    help="the decision whose feature switches the runs use and which --write writes")
    ap.add_argument("--write", action="store_true", help="write the fitted decision to --candidate")
    ap.add_argument("--install", action="store_true", help="also ship it: src/docqa/answer/decision.json and the setting's default")
    ap.add_argument("--share", action="append", default=["squad2=1"], metavar="SOURCE=W",
                    help="how much a source counts against the others (default 1 each)")
    ap.add_argument("--features", help="fit only these features of the model with the embedder (comma-separated)")
    ap.add_argument("--near-misses", type=float, default=NEAR_MISSES,
                    help="the share of the trust dev near misses the chosen threshold abstains on")
    ap.add_argument("--keep-no-dense", action="store_true",
                    help="keep the shipped model without the embedder (the selection features need the embedder)")
    args = ap.parse_args()
    dumps = collect(args) if args.collect else args.dumps
    share = {k: float(v) for k, v in (item.split("=") for item in args.share)}
    only = args.features.split(",") if args.features else None
    models = {"dense": fit_one(load(dumps, dense=True), share, True, only)}
    if not args.keep_no_dense:
        models["no_dense"] = fit_one(load(dumps, dense=False), share, False)
    dense = models["dense"]
    t = args.threshold or choose_threshold(dense["dev"][0], dense["dev"][1], *dense["squad"], near_misses=args.near_misses)
    sweep(dense, t)
    bands = choose_bands(dense["dev"][1], dense["dev"][2], t)
    print(f"\nthreshold {t:.3f} ({'given' if args.threshold else 'chosen on dev'}); bands {bands} (chosen on dev)")
    measured: dict[str, dict] = {}
    for key, m in models.items():
        figures: dict[str, dict] = {}
        for part in ("dev", "test"):
            rows, p, y = m[part]
            figures[part] = {**outcomes(rows, p, t), "levels": levels(p, y, bands)}
        figures["squad"] = outcomes(m["squad"][0], m["squad"][1], t)
        figures["test"]["auc"] = round(auc(m["test"][2], m["test"][1]), 3)
        measured[key] = figures
        print(f"\n{key}: " + json.dumps(figures, indent=1))
    if args.write or args.install:
        switches = json.loads(Path(args.candidate).read_text(encoding="utf-8")) if Path(args.candidate).exists() else {}
        kept = {"no_dense": json.loads(DECISION.read_text(encoding="utf-8"))["no_dense"]} if args.keep_no_dense else {}
        out = {"probability_of": "the answer is right", "prior_chunks": switches.get("prior_chunks", 200), "lead_with_follower": switches.get("lead_with_follower", True),
               **({"judge_picked": True} if switches.get("judge_picked") else {}),
               "features": dense["names"],
               **{key: {k: round(float(v), 4) for k, v in zip(m["names"] + ["bias"], m["beta"])} for key, m in models.items()}, **kept,
               "threshold": t, "bands": bands, "measured": measured,
               "command": "python benchmarks/trust/fit_decision.py --collect --write"}
        text = json.dumps(out, indent=1, ensure_ascii=False) + "\n"
        Path(args.candidate).write_text(text, encoding="utf-8")
        print(f"\nwrote {args.candidate}")
        if args.install:
            DECISION.write_text(text, encoding="utf-8")
            settings = re.sub(r"abstain_threshold: float = Field\([0-9.]+,", f"abstain_threshold: float = Field({t},",
                              SETTINGS.read_text(encoding="utf-8"))
            SETTINGS.write_text(settings, encoding="utf-8")
            print(f"installed it: {DECISION} and the default of answer.abstain_threshold ({t}) in {SETTINGS}")

if __name__ == "__main__":
    main()
