"""The shipped decision plus the sentence selection's figures: one candidate of issue 28, item 2 (after `select`).

    python benchmarks/trust/refit_select.py TRUST.jsonl SQUAD.jsonl [--extra select_best,select_same] [--out F]

TRUST.jsonl: `benchmarks/trust/evaluate.py --split all` at abstain threshold 0 (DOCQA_ANSWER__ABSTAIN_THRESHOLD=0);
SQUAD.jsonl: `benchmarks/answer_eval.py --limit 900 --dump` at threshold 0, both under the shipped decision.  The
model is a logistic regression (fit_decision.fit; the trust dev rows and the SQuAD rows weigh alike) over the
shipped decision's logit and the `--extra` features (the learned ranking's probability of its best pick,
`select_best`, and whether the decision's sentence is that pick, `select_same`), written back as coefficients over
the shipped features so that docqa.answer.answerability reads it as any decision.  The threshold is chosen on dev:
the lowest at which the SQuAD unanswerable questions are abstained on at least as often as by the shipped decision
at its threshold.  The model without the embedder is the shipped one (the ranking needs the embedder).  The test
split is only reported.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import fit_decision as fd  # noqa: E402


def shipped_logit(rows: list[dict], model: dict[str, float]) -> np.ndarray:
    return np.array([model["bias"] + sum(v * r["features"].get(k, 0.0) for k, v in model.items() if k != "bias") for r in rows])


def design(rows: list[dict], model: dict[str, float], extra: list[str]) -> np.ndarray:
    return np.column_stack([shipped_logit(rows, model)] + [[float(r["features"].get(k, 0.0)) for r in rows] for k in extra])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trust")
    ap.add_argument("squad")
    ap.add_argument("--extra", default="select_best,select_same")
    ap.add_argument("--share", type=float, default=1.0, help="the SQuAD rows' weight against the trust dev rows'")
    ap.add_argument("--out", help="write the candidate decision here")
    args = ap.parse_args()
    extra = args.extra.split(",")
    shipped = json.loads(fd.DECISION.read_text(encoding="utf-8"))
    ship = shipped["dense"]
    rows = fd.load([args.trust, args.squad], dense=True)
    dev = [r for r in rows if r["split"] == "dev"]
    trust_dev = [r for r in dev if r["source"] == "trust"]
    squad = [r for r in dev if r["source"] == "squad2"]
    test = [r for r in rows if r["split"] == "test"]
    y = np.array([bool(r["correct"]) for r in dev], dtype=float)
    beta = fd.fit(design(dev, ship, extra), y, fd.weights(dev, {"squad2": args.share}))
    p = {name: fd.predict(design(part, ship, extra), beta) for name, part in (("dev", trust_dev), ("squad", squad), ("test", test))}
    base = {name: 1 / (1 + np.exp(-shipped_logit(part, ship))) for name, part in (("dev", trust_dev), ("squad", squad), ("test", test))}
    floor = fd.outcomes(squad, base["squad"], shipped["threshold"])["unanswerable_abstained"]
    t = min(c for c in np.round(np.arange(0.2, 0.8, 0.005), 3) if fd.outcomes(squad, p["squad"], c)["unanswerable_abstained"] >= floor)
    print(f"stacked on the shipped logit: {dict(zip(['shipped'] + extra + ['bias'], np.round(beta, 3)))}")
    print(f"shipped at {shipped['threshold']}: dev {fd.outcomes(trust_dev, base['dev'], shipped['threshold'])}, "
          f"SQuAD {fd.outcomes(squad, base['squad'], shipped['threshold'])}")
    print("| threshold | dev right & cited | dev near misses abstained | SQuAD answerable right | SQuAD unanswerable abstained |\n|---|---|---|---|---|")
    for c in np.round(np.arange(t - 0.05, t + 0.05, 0.01), 3):
        d, s = fd.outcomes(trust_dev, p["dev"], c), fd.outcomes(squad, p["squad"], c)
        print(f"| {c:.3f} | {d['answerable_right']:.3f} | {d['unanswerable_abstained']:.3f} | {s['answerable_right']:.3f} | {s['unanswerable_abstained']:.3f} |")
    bands = fd.choose_bands(p["dev"], np.array([bool(r["correct"]) for r in trust_dev]), float(t))
    print(f"threshold {t} (chosen on dev: SQuAD abstention >= {floor}); bands {bands}")
    print(f"test (reported only): {fd.outcomes(test, p['test'], t)}; AUC {fd.auc(np.array([bool(r['correct']) for r in test]), p['test']):.3f}")
    if args.out:
        dense = {k: round(float(beta[0] * v), 4) for k, v in ship.items() if k != "bias"}
        dense.update({k: round(float(b), 4) for k, b in zip(extra, beta[1:-1])})
        dense["bias"] = round(float(beta[0] * ship["bias"] + beta[-1]), 4)
        out = {**shipped, "probability_of": "the answer is right", "features": sorted(shipped["features"] + extra), "dense": dense,
               "threshold": float(t), "bands": bands,
               "fitted": "benchmarks/trust/refit_select.py: the shipped SQuAD model's logit and " + ", ".join(extra)
                         + " refitted on the trust dev split and the SQuAD 2.0 subset (900); the model without the embedder unchanged"}
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
