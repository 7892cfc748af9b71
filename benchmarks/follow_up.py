"""Follow-ups that hold, with no model: retrieval recall@5 of two-turn conversations (issue 16).

    python benchmarks/follow_up.py [--against OTHER/src] [--pairs 30] [--seed 16]

Conversations are built from the SQuAD 2.0 subset (English) and CMRC 2018 dev (Chinese): two
answerable questions about the same passage that name the same subject ("the Normans", a CMRC
article's title); the second turn refers back to it with a pronoun ("When did they …?",
"它…"), or with "what about X?" when the first turn names another subject.  For each second turn
the condensed question (`route.condense_heuristic`, no model, the previous turn's question and
answer) is searched, and recall@5 (a top-5 hit from the gold article that holds a gold answer; for
CMRC the gold document) is compared with the same question asked standalone and with the follow-up
searched as it is; and whether the extractive answer to each quotes the gold passage.  `--against` measures another source tree (e.g. main) in the same run.
With `--llm URL` (an OpenAI-compatible server, e.g. `docqa model serve`) the follow-up is also
condensed by the model, as the pipeline does (`prompts.condense_messages`, then
`route.condensed_reply`: the no-model rule when the reply is empty, runs on, or does not resolve
the reference), and searched too; `FOLLOW_UP_RAW=1` uses the model's first line as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
WORK = HERE / ".work" / "follow_up"
SQUAD = DATA / "qa" / "squad2-dev-subset"
CMRC = DATA / "retrieval" / "cmrc2018-dev"
_NAME = re.compile(r"\b(?:the )?[A-Z][a-z]+(?: (?:of (?:the )?)?[A-Z][a-z]+)*")


def squad_pairs(rng: random.Random, count: int) -> list[dict]:
    groups = defaultdict(list)
    for line in (SQUAD / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if not q["is_impossible"]:
            groups[(q["article"], q["paragraph"])].append(q)
    out = []
    for key in sorted(groups):
        qs = groups[key]
        for a in qs:
            names = {m.group() for m in _NAME.finditer(a["question"]) if m.start() > 0}
            for b in qs:
                if b is a:
                    continue
                quoted = "".join(re.findall(r'"[^"]*"', b["question"]))
                shared = [n for n in names if n in b["question"] and b["question"].find(n) > 0 and n not in quoted]
                if shared:
                    name = max(shared, key=len)
                    pronoun = "they" if name.endswith("s") else "it"
                    follow = b["question"].replace(name, pronoun, 1)
                    out.append({"lang": "en", "first": a["question"], "second": b["question"], "follow": follow,
                                "article": a["article"], "answers": b["answers"]})
                    break
            else:
                continue
            break
    rng.shuffle(out)
    return out[:count]


def cmrc_pairs(rng: random.Random, count: int) -> tuple[list[dict], dict[str, dict]]:
    corpus = {d["_id"]: d for d in map(json.loads, (CMRC / "corpus.jsonl").read_text(encoding="utf-8").splitlines())}
    queries = {q["_id"]: q["text"] for q in map(json.loads, (CMRC / "queries.jsonl").read_text(encoding="utf-8").splitlines())}
    by_doc = defaultdict(list)
    for line in (CMRC / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, _ = line.split("\t")
        by_doc[did].append(queries[qid])
    out = []
    for did in sorted(by_doc):
        title = corpus[did]["title"]
        qs = [q for q in by_doc[did] if title in q]
        if len(qs) >= 2 and len(title) >= 2:
            out.append({"lang": "zh", "first": qs[0], "second": qs[1], "follow": qs[1].replace(title, "它", 1),
                        "doc": did})
    rng.shuffle(out)
    out = out[:count]
    keep = {p["doc"] for p in out}
    others = sorted(set(corpus) - keep)
    rng.shuffle(others)
    docs = {did: corpus[did] for did in [*keep, *others[:150]]}
    return out, docs


def build(pairs: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    docs_dir = WORK / "docs"
    (docs_dir / "zh").mkdir(parents=True, exist_ok=True)
    en = squad_pairs(rng, pairs)
    zh, docs = cmrc_pairs(rng, pairs)
    for did, d in docs.items():
        (docs_dir / "zh" / f"{did}.md").write_text(f"# {d['title']}\n\n{d['text']}\n", encoding="utf-8")
    for md in (SQUAD / "docs").glob("*.md"):
        (docs_dir / md.name).write_bytes(md.read_bytes())
    return en + zh


def model_condenser(url: str):
    """The pipeline's condensing step with the chat model at `url` (Pipeline._condense)."""
    from docqa.answer import prompts
    from docqa.answer.route import condensed_reply
    from docqa.llm.openai_compat import OpenAICompatModel

    model = OpenAICompatModel(url, os.environ.get("DOCQA_LLM__MODEL", "local"), timeout=600)
    check = os.environ.get("FOLLOW_UP_RAW") != "1"  # FOLLOW_UP_RAW=1: the model's first line as it is

    def condense(question: str, previous: dict) -> tuple[str, bool]:
        reply = model.complete(prompts.condense_messages(question, previous), max_tokens=96).text
        if check:
            standalone = condensed_reply(reply, question, previous)
        else:
            lines = [line.strip().strip('"“”') for line in reply.strip().splitlines() if line.strip()]
            standalone = lines[0] if lines and len(lines[0]) <= 4 * len(question) + 200 else None
        return standalone or "", standalone is not None
    return condense


def worker(name: str, conversations: list[dict]) -> dict:
    from docqa.answer.route import condense_heuristic
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    db = WORK / f"{name}.db"
    for stale in WORK.glob(f"{name}.db*"):
        stale.unlink()
    hits_at = {"standalone": 0, "as asked": 0, "condensed": 0, "answered standalone": 0, "answered condensed": 0}
    url = os.environ.get("FOLLOW_UP_LLM", "")
    model = model_condenser(url) if url else None
    if model:
        hits_at.update({"condensed by the model": 0, "model replies used": 0})
    per_lang = defaultdict(lambda: defaultdict(int))
    examples = []
    with KnowledgeBase(Settings(kb=str(db), llm={"provider": "none"})) as kb:
        kb.add([WORK / "docs"])
        for c in conversations:
            first = kb.ask(c["first"], record=False)
            previous = {"question": c["first"], "answer_summary": first.answer, "sources": []}
            condensed = condense_heuristic(c["follow"], previous)
            queries = [("standalone", c["second"]), ("as asked", c["follow"]), ("condensed", condensed)]
            if model:
                by_model, used = model(c["follow"], previous)
                hits_at["model replies used"] += used
                queries.append(("condensed by the model", by_model or condensed))
            for key, query in queries:
                found = any(_gold(h, c) for h in kb.search(query, 5))
                hits_at[key] += found
                per_lang[c["lang"]][key] += found
            for key, query in (("answered standalone", c["second"]), ("answered condensed", condensed)):
                answer = kb.ask(query, record=False)  # the extractive answer: quotes the gold passage?
                right = answer.answerable and any(_gold_citation(x, c) for x in answer.citations)
                hits_at[key] += right
                per_lang[c["lang"]][key] += right
            if len(examples) < 6 or (model and len(examples) < 12):
                examples.append({"first": c["first"], "follow": c["follow"], "condensed": condensed,
                                 **({"by the model": dict(queries)["condensed by the model"]} if model else {})})
    n = len(conversations)
    return {"conversations": n, **{k: round(v / n, 3) for k, v in hits_at.items()},
            "by_language": {lang: {k: v for k, v in d.items()} for lang, d in per_lang.items()}, "examples": examples}


def _gold(hit, c: dict) -> bool:
    if c["lang"] == "zh":
        return Path(hit.path).stem == c["doc"]
    return Path(hit.path).name == c["article"] and any(a in hit.text for a in c["answers"])


def _gold_citation(citation, c: dict) -> bool:
    if c["lang"] == "zh":
        return Path(citation.path).stem == c["doc"]
    return Path(citation.path).name == c["article"] and any(a in citation.quote for a in c["answers"])


def run_tree(src: Path, name: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, __file__, "--worker", name], env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{name} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=30, help="conversations per language")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--against", default="")
    ap.add_argument("--llm", default="", help="OpenAI-compatible base URL: also condense with this model")
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        conversations = json.loads((WORK / "conversations.json").read_text(encoding="utf-8"))
        print(json.dumps(worker(args.worker, conversations), ensure_ascii=False))
        return
    WORK.mkdir(parents=True, exist_ok=True)
    conversations = build(args.pairs, args.seed)
    if args.llm:
        os.environ["FOLLOW_UP_LLM"] = args.llm
    (WORK / "conversations.json").write_text(json.dumps(conversations, ensure_ascii=False, indent=1), encoding="utf-8")
    runs = {}
    if args.against:
        runs["before"] = run_tree(Path(args.against).resolve(), "before")
    runs["after" if args.against else "this tree"] = run_tree(HERE.parent / "src", "after")
    langs = {c["lang"] for c in conversations}
    print(f"## follow-ups: {len(conversations)} two-turn conversations ({', '.join(sorted(langs))}), seed {args.seed}\n")
    print("| run | recall@5 standalone | follow-up as asked | follow-up condensed (no model) | points under standalone "
          "| extractive answer right: standalone | condensed follow-up |")
    print("|---|---|---|---|---|---|---|")
    for name, r in runs.items():
        print(f"| {name} | {r['standalone']:.3f} | {r['as asked']:.3f} | {r['condensed']:.3f} "
              f"| {100 * (r['standalone'] - r['condensed']):.1f} | {r['answered standalone']:.3f} "
              f"| {r['answered condensed']:.3f} |")
    if args.llm:
        print("\n| run | recall@5 standalone | condensed by the model | points under standalone | model replies used |")
        print("|---|---|---|---|---|")
        for name, r in runs.items():
            print(f"| {name} | {r['standalone']:.3f} | {r['condensed by the model']:.3f} "
                  f"| {100 * (r['standalone'] - r['condensed by the model']):.1f} | {r['model replies used']:.3f} |")
    print("\n" + json.dumps(runs, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
