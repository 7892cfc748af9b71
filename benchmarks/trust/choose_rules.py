"""The chooser's rules (docqa.answer.choose) applied to the replies of one run that asked every question.

    python benchmarks/trust/choose_rules.py EXTRACTIVE.jsonl[,MORE] CHOOSER.jsonl[,MORE]

CHOOSER is an evaluate.py run with `answer.choose_sentence` on and `choose.ASK_ABSTAINED` set (every question with
candidates asked; its trace's `choosing` entry keeps the reply, the first token's shares, the evidence and the
candidates); EXTRACTIVE the no-model run of the same questions.  For each setting of NONE_SHARE, NONE_FLOOR and
RESCUE_FLOOR it prints answerable correct and cited, near misses abstained, and the questions better and worse than
the extractive answer, and the rules for a later pick on an abstention (PICK_SHARE, PICK_FLOOR, CHECK_YES: the
pick's check alone, the trace's `checking_pick`).  A rescued answer is scored on the pick and candidates 1-3 (the
sentences the extractive answer would quote); an answer led by the pick is the run's own.  Also: where the first candidate holding the answer ranks.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import score  # noqa: E402

from docqa.answer import choose  # noqa: E402

GOOD = {"correct", "abstained"}


def load(paths: str) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for path in paths.split(","):
        for line in open(path, encoding="utf-8"):
            row = json.loads(line)
            rows[row["id"]] = row
    return rows


def questions() -> dict[str, dict]:
    out = {}
    for path in HERE.glob("questions_*.jsonl"):
        for line in open(path, encoding="utf-8"):
            q = json.loads(line)
            out[q["id"]] = q
    return out


def choosing(row: dict) -> dict | None:
    return next((t for t in row["model_trace"] if t.get("stage") == "choosing" and "evidence" in t), None)


def holds(q: dict, candidates: list[dict]) -> bool:
    """The candidates together match every answer group, and one is in an evidence file."""
    files = {e["file"] for e in q.get("evidence") or []}
    text = " ".join(c["text"] for c in candidates)
    return all(score.matched_groups(text, q.get("answers") or [])) and any(
        any(c["path"].endswith("/" + f) for f in files) for c in candidates)


def checked(row: dict) -> float | None:
    """The yes share of the chooser's pick checked alone (the trace's `checking_pick`; in a row without it, read from
    the call's alternatives before the stage marked `check_pick`), None when not asked."""
    trace = row["model_trace"]
    kept = next((t.get("yes") for t in trace if t.get("stage") == "checking_pick"), None)
    if kept is not None:
        return kept
    at = next((i for i, t in enumerate(trace) if t.get("check_pick")), None)
    call = trace[at - 1] if at else {}
    return choose.yes(call.get("reply") or "", call.get("top")) if "model_call" in call else None


def outcomes(chooser: dict, qs: dict, none_share: float, none_floor: float, rescue_floor: float,
             later: tuple[float, float, float] = (1.01, 1.01, 1.01)) -> dict[str, str]:
    """`later`: (PICK_SHARE, PICK_FLOOR, CHECK_YES), an abstention taken back with a later pick (off by default);
    a release abstention that nothing names a release for is never taken back."""
    pick_share, pick_floor, check_yes = later
    out = {}
    for qid, row in chooser.items():
        q, t, outcome = qs[qid], choosing(row), row["outcome"]
        if t is not None:
            shares = {int(k): v for k, v in (t.get("shares") or {}).items()}
            doubts = t["pick"] == 0 or shares.get(0, 0.0) >= none_share
            if not t["abstained"] and doubts and t["evidence"] < none_floor:
                outcome = "false_abstention" if q["answerable"] else "abstained"
            may = t["evidence"] >= rescue_floor and not (row.get("evidence_features") or {}).get("release_unnamed")
            if t["abstained"]:
                pick, yes = t["pick"], checked(row)
                later_ok = pick > 1 and ((shares.get(pick, 0.0) >= pick_share and t["evidence"] >= pick_floor)
                                         or (yes is not None and yes >= check_yes))
                if may and not doubts and (pick == 1 or later_ok):
                    shown = [t["candidates"][pick - 1]] + t["candidates"][:3]
                    outcome = ("correct" if holds(q, shown) else "wrong") if q["answerable"] else "answered"
                else:
                    outcome = "false_abstention" if q["answerable"] else "abstained"
        out[qid] = outcome
    return out


def line(name: str, got: dict[str, str], base: dict[str, dict], qs: dict) -> str:
    ans = [i for i in got if qs[i]["answerable"]]
    un = [i for i in got if not qs[i]["answerable"]]
    c = sum(got[i] == "correct" for i in ans)
    a = sum(got[i] == "abstained" for i in un)
    better = [i for i in got if got[i] in GOOD and base[i]["outcome"] not in GOOD]
    worse = [i for i in got if got[i] not in GOOD and base[i]["outcome"] in GOOD]
    return (f"{name:34s} answerable {c}/{len(ans)} ({c / max(len(ans), 1):.3f})  abstained {a}/{len(un)} "
            f"({a / max(len(un), 1):.3f})  better {len(better)}  worse {len(worse)} {worse[:6]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("extractive")
    ap.add_argument("chooser")
    args = ap.parse_args()
    qs, chooser = questions(), load(args.chooser)
    base = {i: r for i, r in load(args.extractive).items() if i in chooser}
    print(line("extractive", {i: r["outcome"] for i, r in base.items()}, base, qs))
    for none_share in (1.01, 0.03, 0.05, 0.06, 0.1):
        for none_floor in (0.0, 0.4, 0.45, 0.5):
            for rescue_floor in (1.01, 0.25, 0.2, 0.1):
                name = f"NONE_SHARE {none_share} NONE_FLOOR {none_floor} RESCUE_FLOOR {rescue_floor}"
                print(line(name, outcomes(chooser, qs, none_share, none_floor, rescue_floor), base, qs))
    for later in ((1.01, 1.01, 1.01), (0.5, 0.3, 1.01), (0.5, 0.3, 0.6), (0.5, 0.3, 0.7), (0.5, 0.3, 0.8), (1.01, 1.01, 0.7)):
        name = f"later picks: PICK_SHARE {later[0]} PICK_FLOOR {later[1]} CHECK_YES {later[2]}"
        print(line(name, outcomes(chooser, qs, 1.01, 0.0, 0.2, later), base, qs))
    ranks: Counter = Counter()
    for qid, row in chooser.items():
        t = choosing(row)
        if t is None or not qs[qid]["answerable"]:
            continue
        right = [k for k, c in enumerate(t["candidates"], 1) if holds(qs[qid], [c])]
        ranks[(base[qid]["outcome"], right[0] if right else None, "picked right" if t["pick"] in right else "")] += 1
    for key, n in sorted(ranks.items(), key=str):
        print("extractive outcome, first right candidate, the pick:", key, n)


if __name__ == "__main__":
    main()
