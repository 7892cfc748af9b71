"""The tables of a trust dev set run (rows written by evaluate.py), and the comparison of two runs."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path

# Per question, better is higher: a wrong answer is worse than saying "not found".
RANK = {True: {"correct": 4, "uncited": 3, "false_abstention": 2, "wrong": 1, "failed": 0},
        False: {"abstained": 2, "answered": 1, "failed": 0}}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def summary(rows: list[dict]) -> dict:
    """The figures of a group of rows (see score.py for the outcomes and the claim figures)."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    claims = [c for r in rows for c in r["claims"]]
    pairs = [s for c in claims for s in c["supported"]]
    seconds = sorted(r["seconds"] for r in rows)

    def count(group: list[dict], outcome: str) -> int:
        return sum(r["outcome"] == outcome for r in group)

    return {
        "questions": len(rows), "answerable": len(answerable), "unanswerable": len(unanswerable),
        **{o: count(answerable, o) for o in ("correct", "uncited", "wrong", "false_abstention")},
        **{o: count(unanswerable, o) for o in ("abstained", "answered")},
        "failed": count(rows, "failed"),
        "claims": len(claims), "cited_claims": sum(bool(c["citations"]) for c in claims),
        "citations": len(pairs), "supporting": sum(pairs),
        # the same within the answers right and cited: what quoting adds beyond whether the answer is right (a wrong
        # answer's and an unanswerable question's citations support nothing, so `supporting` / `citations` is capped by
        # the share of answers that are right)
        "citations_correct": sum(len(c["supported"]) for r in rows if r["outcome"] == "correct" for c in r["claims"]),
        "supporting_correct": sum(sum(c["supported"]) for r in rows if r["outcome"] == "correct" for c in r["claims"]),
        "entailing": sum(e for c in claims for e in c.get("entailed", [])),
        "seconds_mean": statistics.mean(seconds) if seconds else 0.0,
        "seconds_p50": seconds[len(seconds) // 2] if seconds else 0.0,
        "seconds_p95": seconds[min(len(seconds) - 1, int(len(seconds) * 0.95))] if seconds else 0.0,
    }


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} % ({part}/{whole})" if whole else "-"


_HEAD = ("| {} | questions | correct & cited | uncited | wrong | false abstention | abstained (unans.) "
         "| answered (unans.) | citation recall | citation precision | s/question |")


def table(title: str, rows: list[dict], key: Callable[[dict], str]) -> None:
    """A markdown table of `rows` grouped by `key`."""
    print(f"\n{_HEAD.format(title)}\n|" + "---|" * 11)
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(str(key(r)), []).append(r)
    for name in sorted(groups):
        s = summary(groups[name])
        a, u = s["answerable"], s["unanswerable"]
        print(f"| {name} | {s['questions']} | {share(s['correct'], a)} | {share(s['uncited'], a)} | {share(s['wrong'], a)} "
              f"| {share(s['false_abstention'], a)} | {share(s['abstained'], u)} | {share(s['answered'], u)} "
              f"| {share(s['cited_claims'], s['claims'])} | {share(s['supporting'], s['citations'])} "
              f"| {s['seconds_mean']:.2f} |")


def tables(rows: list[dict]) -> None:
    """By split; then, over every row, by lang, kind, answerable or not, docset, confidence; the target lines."""
    if not rows:
        print("no rows")
        return
    modes = sorted({r["run"] for r in rows})
    print(f"run: {', '.join(modes)}; {len(rows)} questions; published: "
          + ", ".join(f"{w} {sum(r['written_by'] == w for r in rows)}" for w in sorted({r['written_by'] for r in rows})))
    table("split", rows, lambda r: r["split"])
    table("lang", rows, lambda r: r["lang"])
    table("kind", rows, lambda r: r["kind"])
    table("answerable", rows, lambda r: "answerable" if r["answerable"] else "unanswerable")
    table("docset", rows, lambda r: r.get("docset"))
    table("confidence", rows, lambda r: r["confidence"] or "none (not found)")
    targets(rows)


def targets(rows: list[dict]) -> None:
    """The issue's target lines."""
    s = summary(rows)
    print("\nTargets (issue 28):")
    print(f"- answerable, correct and cited:    {share(s['correct'], s['answerable'])}")
    print(f"- unanswerable, abstained:          {share(s['abstained'], s['unanswerable'])}")
    print(f"- citation precision (per claim):   {share(s['supporting'], s['citations'])} the cited span is gold evidence for the claim")
    print(f"- citation precision in the answers right and cited: {share(s['supporting_correct'], s['citations_correct'])}; "
          f"{s['citations'] - s['citations_correct']} of the {s['citations']} citations are in answers wrong, uncited or to "
          "unanswerable questions")
    print(f"- citation support, ALCE (per claim): {share(s['entailing'], s['citations'])} the cited source bears the claim out "
          "(alone, or needed among the claim's citations)")
    print(f"- citation recall (per claim):      {share(s['cited_claims'], s['claims'])}")
    print(f"- seconds per question:             mean {s['seconds_mean']:.2f}, p50 {s['seconds_p50']:.2f}, "
          f"p95 {s['seconds_p95']:.2f}")
    print(f"- answered but wrong: {s['wrong']}; correct but not citing the evidence: {s['uncited']}; "
          f"false abstentions: {s['false_abstention']}; unanswerable answered: {s['answered']}; failed: {s['failed']}")


# the cuts of the curve and of the reliability table; the shipped decision's threshold and `high` band are added
# (`shipped_cuts`), so that the table's bands are the confidence levels shown
CURVE = (0.20, 0.25, 0.30, 0.335, 0.35, 0.40, 0.45, 0.50, 0.58, 0.65)
RELIABILITY = (0.0, 0.2, 0.3, 0.4, 0.5, 0.7, 1.01)


def shipped_cuts() -> tuple[float, float]:
    """The shipped decision's abstain threshold and the lowest probability of `high` (decision.json, or the file
    DOCQA_DECISION_FILE names)."""
    from docqa.answer.answerability import decision

    d = decision()
    return float(d["threshold"]), float(d["bands"]["high"])


def curve(rows: list[dict], thresholds: tuple[float, ...] | None = None) -> None:
    """The answer-or-abstain trade-off of a run made at abstain threshold 0 (every question answered, its probability
    recorded): at each threshold (default CURVE and the shipped threshold), the answerable questions answered right
    and cited, the near misses abstained, and the share of the answers shown that were right and cited; then the
    reliability table (by probability, cut at RELIABILITY and the shipped threshold and `high` band: questions, mean
    probability, the share right and cited among them)."""
    shipped = shipped_cuts()
    thresholds = thresholds if thresholds is not None else tuple(sorted({*CURVE, shipped[0]}))
    bounds = sorted({*RELIABILITY, *shipped})
    scored = [r for r in rows if r.get("evidence") is not None and r["outcome"] != "failed"]
    if any(r["outcome"] == "false_abstention" for r in scored):
        print("\n(not a threshold-0 run: some questions abstained; the curve below is cut from what was answered)")
    answerable = [r for r in scored if r["answerable"]]
    near = [r for r in scored if not r["answerable"]]
    print("\n| threshold | answerable: right and cited | near misses abstained | answers shown right and cited |")
    print("|---|---|---|---|")
    for t in thresholds:
        right = sum(float(r["evidence"]) >= t and r["outcome"] == "correct" for r in answerable)
        abstained = sum(float(r["evidence"]) < t or r["outcome"] == "abstained" for r in near)
        shown = [r for r in scored if float(r["evidence"]) >= t and r["outcome"] not in ("false_abstention", "abstained")]
        print(f"| {t:.3f} | {share(right, len(answerable))} | {share(abstained, len(near))} "
              f"| {share(sum(r['outcome'] == 'correct' for r in shown), len(shown))} |")
    print("\n| probability | questions | mean probability | right and cited |")
    print("|---|---|---|---|")
    for lo, hi in zip(bounds, bounds[1:]):
        inside = [r for r in scored if lo <= float(r["evidence"]) < hi]
        if inside:
            mean = sum(float(r["evidence"]) for r in inside) / len(inside)
            print(f"| {lo:.3f}–{min(hi, 1.0):.3f} | {len(inside)} | {mean:.2f} "
                  f"| {share(sum(r['outcome'] == 'correct' for r in inside), len(inside))} |")


def compare(a: list[dict], b: list[dict], names: tuple[str, str] | list[str] = ("A", "B")) -> int:
    """Print the questions whose outcome differs between run A and run B, B's change marked better or
    worse (RANK); returns how many are worse in B."""
    by_a, by_b = {r["id"]: r for r in a}, {r["id"]: r for r in b}
    common = sorted(by_a.keys() & by_b.keys())
    better = worse = 0
    relabelled = []  # the gold changed between the runs (answerable or not): not a change of the answerer
    print(f"A = {names[0]} ({by_a[common[0]]['run'] if common else '?'}), B = {names[1]} "
          f"({by_b[common[0]]['run'] if common else '?'}): {len(common)} questions in both")
    for qid in common:
        ra, rb = by_a[qid], by_b[qid]
        if ra["answerable"] != rb["answerable"]:
            relabelled.append(qid)
            print(f"\nRELABELLED  {qid}: answerable {ra['answerable']} -> {rb['answerable']} "
                  f"({ra['outcome']} -> {rb['outcome']}): the question's gold changed, not counted")
            continue
        if ra["outcome"] == rb["outcome"]:
            continue
        delta = RANK[ra["answerable"]][rb["outcome"]] - RANK[ra["answerable"]][ra["outcome"]]
        better, worse = better + (delta > 0), worse + (delta < 0)
        print(f"\n{'B better' if delta > 0 else 'B WORSE'}  {qid} ({ra['split']}, {ra['lang']}, {ra['kind']}): "
              f"{ra['outcome']} -> {rb['outcome']}\n  Q: {ra['question']}\n  A: {_short(ra['answer'])}\n  B: {_short(rb['answer'])}")
    only = sorted(by_a.keys() ^ by_b.keys())
    print(f"\n{better} better in B, {worse} worse in B, {len(common) - better - worse - len(relabelled)} the same"
          + (f"; {len(relabelled)} relabelled" if relabelled else "")
          + (f"; {len(only)} in one run only: {', '.join(only[:10])}{' …' if len(only) > 10 else ''}" if only else ""))
    return worse


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
