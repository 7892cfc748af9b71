"""With a small local model, are answers better than with no model?  (issue 20; issue 16 item 6)

    python benchmarks/model_answers.py --llm http://127.0.0.1:PORT/v1 [--model NAME] [--limit N]
        [--agent-every K] [--modes extractive,pipeline,agent,auto] [--reuse]

One knowledge base, built from ../shared/data: the 8 SQuAD 2.0 articles, 40 CMRC 2018 paragraphs (one
file each) and 17 files of the multi-format pack (PDF, DOCX, PPTX, XLSX, HTML, CSV, JSON, e-mail,
Chinese text).  The questions: a seeded sample of SQuAD 2.0 (answerable and unanswerable), of CMRC
2018, and the hand-written questions below over the multi-format files (some on PDF pages, some
Chinese questions over English text and English over Chinese, some with no answer in the files).

Each question is asked in every mode, through `KnowledgeBase.ask`:
- extractive: no model (llm.provider none);
- pipeline: the model at --llm, with the acceptance rule (docqa.answer.accept); "pipeline before" is
  what the pipeline published before the rule, from the same run: the model's checked answer as it
  was published then (kept in the run's trace by the rule), so no second model call is needed;
- agent: on every K-th question (it is slow on 2 cores), agent.max_steps 4;
- auto: `choose_mode(question, "auto")` per question; a question auto gives the pipeline has the
  pipeline's answer (the same code path), one it gives the agent is asked in agent mode.

Scored: answer accuracy with a correct citation (a gold answer in the text and a citation of the
gold file), abstention on unanswerable questions, junk sentences (a question, chatter, a lone
marker, a heading or markup), language match (the answer in the question's language, or a
quotation flagged in it), seconds, model calls and tokens per question.  Per-question rows go to
.work/model_answers/rows.jsonl as they come (a partial run is still readable: --report).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
WORK = HERE / ".work" / "model_answers"

from docqa.answer.citer import strip_markers  # noqa: E402
from docqa.answer.statement import is_statement, structure_line  # noqa: E402
from docqa.evaluate import _norm  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.run.life import choose_mode  # noqa: E402
from docqa.settings import Settings  # noqa: E402
from docqa.text.language import language_of  # noqa: E402
from docqa.text.sentences import sentence_spans  # noqa: E402

MULTIFORMAT = ["pdf/fake-memo.pdf", "pdf/layout-parser-paper-with-table.pdf", "pdf/copy-protected.pdf",
               "office/docx-tables.docx", "office/fake-power-point-table.pptx",
               "office/2023-half-year-analyses-by-segment.xlsx", "office/docx-hdrftr.docx", "web/example-10k-1p.html",
               "web/fake-html-cp1252.html", "text/simple-table.md", "text/fake-text-utf-16.txt", "text/stanley-cups.csv",
               "text/arbitrary-records.json", "email/fake-email-attachment.eml", "email/fake-email-b64.eml",
               "parity/eng_spa_mult.md", "zh/cmrc2018-trial-gb18030.txt", "zh/cmrc2018-trial-zh-CN.md"]

# (kind, question, gold answers (any one, either language), gold file; None: no answer in the files)
MF = [
    ("pdf", "How many bottles of water were delivered?", ["20,000", "20000"], "fake-memo.pdf"),
    ("pdf", "On what date were the water, blankets and laptops delivered?", ["January 23, 2023", "January 23"], "fake-memo.pdf"),
    ("pdf", "How many trucks were used for the delivery, and for how long?", ["3 trucks", "15 hours"], "fake-memo.pdf"),
    ("pdf", "Which backbones do the base and large models of the LayoutParser model zoo use?", ["ResNet 50", "ResNet 101", "ResNet-50"], "layout-parser-paper-with-table.pdf"),
    ("pdf", "What does the Newspaper dataset of the LayoutParser model zoo contain?", ["scanned US newspapers", "US newspapers"], "layout-parser-paper-with-table.pdf"),
    ("pdf", "How many lines of code does LayoutParser need to perform layout detection?", ["four lines", "4 lines"], "layout-parser-paper-with-table.pdf"),
    ("pdf", "Where is the LayoutParser library publicly available?", ["layout-parser.github.io"], "copy-protected.pdf"),
    ("pdf", "Which library is LayoutParser's layout detection built upon?", ["Detectron2"], "layout-parser-paper-with-table.pdf"),
    ("doc", "What is the trading symbol of Galaxy Gaming's common stock?", ["GLXZ"], "example-10k-1p.html"),
    ("doc", "In which state is Galaxy Gaming incorporated?", ["Nevada"], "example-10k-1p.html"),
    ("doc", "What were Nespresso's sales in January–June 2023, in millions of CHF?", ["3128", "3,128"], "2023-half-year-analyses-by-segment.xlsx"),
    ("doc", "How many Stanley Cups have the Maple Leafs won?", ["13"], "stanley-cups.csv"),
    ("doc", "What is the price of the Pruning Shears?", ["24.99"], "arbitrary-records.json"),
    ("doc", "Which colours are in the same table row as Tangerine on the slide?", ["Pink", "Aqua"], "fake-power-point-table.pptx"),
    ("zh>en", "备忘录中送达了多少瓶水？", ["20,000", "20000", "2万", "两万"], "fake-memo.pdf"),
    ("zh>en", "这些物资是哪一天送达的？", ["2023年1月23日", "1月23日", "January 23"], "fake-memo.pdf"),
    ("zh>en", "Galaxy Gaming 公司普通股的交易代码是什么？", ["GLXZ"], "example-10k-1p.html"),
    ("zh>en", "Galaxy Gaming 公司在哪个州注册成立？", ["内华达", "Nevada"], "example-10k-1p.html"),
    ("zh>en", "LayoutParser 的布局检测是基于哪个库构建的？", ["Detectron2"], "layout-parser-paper-with-table.pdf"),
    ("zh>en", "Maple Leafs 队赢得过多少次斯坦利杯？", ["13"], "stanley-cups.csv"),
    ("zh>en", "Pruning Shears 的价格是多少？", ["24.99"], "arbitrary-records.json"),
    ("en>zh", "In what year was MIT OpenCourseWare started?", ["2002"], "cmrc2018-trial-zh-CN.md"),
    ("en>zh", "In what year did the battle at Thermopylae take place?", ["480"], "cmrc2018-trial-zh-CN.md"),
    ("en>zh", "Who proposed the concept of Avetheropoda in 1988?", ["Paul Sereno", "保罗·塞里诺", "Sereno"], "cmrc2018-trial-gb18030.txt"),
    ("zh", "放线菌酮可以被什么破坏？", ["碱"], "cmrc2018-trial-gb18030.txt"),
    ("zh", "2007年11月，MIT OpenCourseWare 已经有多少个课程在线上？", ["1800"], "cmrc2018-trial-zh-CN.md"),
    ("none", "How many laptops were stolen from the warehouse?", [], None),
    ("none", "What was Galaxy Gaming's total revenue in 2024?", [], None),
    ("none", "备忘录中的物资是由哪家快递公司运送的？", [], None),
    ("none", "What is the warranty period of the Garden Trowel?", [], None),
    ("none", "LayoutParser 支持哪些 GPU 型号？", [], None),
    ("explore", "Compare the sales of Zone NA and Zone EUR in January–June 2023.", ["12553", "9467", "12,553", "9,467"], "2023-half-year-analyses-by-segment.xlsx"),
]


def build(root: Path) -> None:
    """The corpus folder: SQuAD articles, CMRC paragraphs (one file each), the multi-format files."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "squad").mkdir(parents=True)
    for f in (DATA / "qa" / "squad2-dev-subset" / "docs").glob("*.md"):
        shutil.copy(f, root / "squad" / f.name)
    (root / "cmrc").mkdir()
    for doc in cmrc_docs():
        (root / "cmrc" / f"cmrc_{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
    for rel in MULTIFORMAT:
        target = root / "mf" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "docs" / "multiformat" / rel, target)


def cmrc_docs() -> list[dict]:
    with open(DATA / "retrieval" / "cmrc2018-dev" / "corpus.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    return docs[:40]


def questions(n_squad: int, n_cmrc: int) -> list[dict]:
    """The question set, interleaved by kind so that a partial run is representative."""
    rng = random.Random(20)
    rows = [json.loads(x) for x in open(DATA / "qa" / "squad2-dev-subset" / "questions.jsonl", encoding="utf-8")]
    good = rng.sample([r for r in rows if not r["is_impossible"]], n_squad // 2)
    bad = rng.sample([r for r in rows if r["is_impossible"]], n_squad - n_squad // 2)
    squad = [{"kind": "squad" if not r["is_impossible"] else "squad-none", "question": r["question"],
              "answers": r["answers"], "file": r["article"] if not r["is_impossible"] else None,
              "paragraph": r["paragraph"], "article": r["article"]} for r in good + bad]
    base = DATA / "retrieval" / "cmrc2018-dev"
    answers = {json.loads(x)["query_id"]: json.loads(x)["answers"] for x in open(base / "answers.jsonl", encoding="utf-8")}
    qtext = {json.loads(x)["_id"]: json.loads(x)["text"] for x in open(base / "queries.jsonl", encoding="utf-8")}
    qrels = [line.split("\t")[:2] for line in open(base / "qrels" / "test.tsv", encoding="utf-8").read().splitlines()[1:]]
    ids = {d["_id"] for d in cmrc_docs()}
    pool = [(q, d) for q, d in qrels if d in ids]
    cmrc = [{"kind": "cmrc", "question": qtext[q], "answers": answers[q], "file": f"cmrc_{d}.md"}
            for q, d in rng.sample(pool, n_cmrc)]
    mf = [{"kind": k, "question": q, "answers": a, "file": f} for k, q, a, f in MF]
    out, lists = [], [mf, squad, cmrc]
    while any(lists):
        for lst in lists:
            if lst:
                out.append(lst.pop(0))
    return out


# -- scoring ----------------------------------------------------------------------------------------
_NOT_FOUND = ("The documents do not contain an answer", "文档中没有找到这个问题的答案")


def score(q: dict, text: str | None, answerable: bool, cited_paths: list[str], cited_quotes: list[str],
          gold_paragraph: str | None) -> dict:
    text = text or ""
    answered = bool(answerable and text and not text.startswith(_NOT_FOUND))
    body = "\n".join(line for line in text.splitlines() if line.strip() and not _is_note(line))
    contains = any(_norm(a) in _norm(body) for a in q["answers"] if a.strip())
    files = {os.path.basename(p) for p in cited_paths}
    right_file = q["file"] is not None and q["file"] in files
    sentences = [body[s:e] for s, e in sentence_spans(body)] if answered else []
    junk = [x for x in sentences if strip_markers(x).strip() and (not is_statement(x) or structure_line(x.strip()) in ("heading", "markup"))]
    flagged = any(_is_note(line) for line in text.splitlines())
    lang_ok = (not answered) or language_of(strip_markers(body)) == language_of(q["question"]) or flagged
    para = None
    if gold_paragraph is not None and cited_quotes and answered:
        g = _norm(gold_paragraph)
        para = any(_norm(c) in g for c in cited_quotes if c.strip())
    return {"answered": answered, "correct": bool(q["file"] and answered and contains and right_file),
            "contains": contains, "right_file": right_file, "sentences": len(sentences), "junk": len(junk),
            "junk_text": junk[:3], "unverified": text.count("[unverified]") + text.count("［未核实］"),
            "language_ok": lang_ok, "cited_gold_paragraph": para}


def _is_note(line: str) -> bool:
    """The line that flags a quotation in the other language (docqa.answer.accept.quotation_note)."""
    return line.strip().startswith(("（以上引文为", "(The sentences above are quoted"))


# -- asking --------------------------------------------------------------------------------------------
def ask(kb: KnowledgeBase, q: dict, mode: str | None) -> tuple:
    events: list = []
    t0 = time.perf_counter()
    answer = kb.ask(q["question"], mode=mode, on_event=events.append)
    seconds = time.perf_counter() - t0
    trace = kb.log.run(answer.run_id).trace if answer.run_id else []
    accepting = [t for t in trace if t.get("stage") == "accepting"]
    return answer, seconds, accepting[-1] if accepting else None, [t for t in trace if t.get("stage") == "routing"]


def row(q: dict, mode: str, answer, seconds: float, gold: str | None, extra: dict | None = None) -> dict:
    paths = [c.path for c in answer.citations]
    quotes = [c.quote for c in answer.citations]
    out = {"mode": mode, "kind": q["kind"], "question": q["question"], "answer": answer.answer,
           "published_mode": answer.mode, "status": answer.status, "seconds": round(seconds, 2),
           "calls": answer.usage.get("model_calls", 0), "tokens": answer.usage.get("total_tokens", 0),
           "acceptance": answer.retrieval.to_dict().get("acceptance"), "cited": [os.path.basename(p) for p in paths],
           **score(q, answer.answer, answer.answerable, paths, quotes, gold)}
    out.update(extra or {})
    return out


def before_row(q: dict, mode: str, after: dict, accepting: dict | None, gold: str | None) -> dict:
    """What the same run published before the acceptance rule (the model's checked answer as it was)."""
    if accepting is None:  # the rule was not reached (no passages, a failure): the same as after
        return {**after, "mode": mode}
    text = accepting.get("before")
    paths = accepting.get("attempt_paths", [])
    quotes = accepting.get("attempt_quotes", [])
    out = {**after, "mode": mode, "answer": text or "(not found)"}
    out.update(score(q, text, text is not None, paths, quotes, gold))
    return out


def gold_paragraph(kb: KnowledgeBase, q: dict, cache: dict) -> str | None:
    if q["kind"] != "squad":
        return None
    art = q["article"]
    if art not in cache:
        rec = next((r for r in kb.documents.list(None) if os.path.basename(r.path) == art), None)
        text = kb.documents.text(rec.document_id) if rec else ""
        blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
        cache[art] = blocks[1:] if blocks and blocks[0].startswith("#") else blocks
    paras = cache[art]
    return paras[q["paragraph"]] if 0 <= q["paragraph"] < len(paras) else None


def settings(db: Path, args, model: bool, rule: bool = True) -> Settings:
    llm = ({"provider": "openai", "base_url": args.llm, "model": args.model, "max_tokens": 320, "context_window": 4096,
            "timeout": 600, "temperature": 0.0, "max_retries": 0} if model else {"provider": "none"})
    answer = {"review_rounds": args.review_rounds, **({} if rule else {"accept_share": 0.0})}
    return Settings(kb=str(db), llm=llm, answer=answer,
                    agent={"max_steps": args.agent_steps, "max_wall_seconds": 420, "search_top_k": 3,
                           "max_result_chars": 2500})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llm", default="")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--squad", type=int, default=8)
    ap.add_argument("--cmrc", type=int, default=4)
    ap.add_argument("--agent-every", type=int, default=6)
    ap.add_argument("--agent-steps", type=int, default=3)
    ap.add_argument("--review-rounds", type=int, default=1)
    ap.add_argument("--modes", default="extractive,pipeline,agent,auto")
    ap.add_argument("--reuse", action="store_true", help="keep the knowledge base of the last run")
    ap.add_argument("--out", default=str(WORK / "rows.jsonl"))
    ap.add_argument("--report", action="store_true", help="only summarise the rows of --out (several: comma-separated)")
    ap.add_argument("--kinds", default="", help="only these kinds of question (comma-separated), e.g. explore")
    ap.add_argument("--before-pass", default="", help="rows of a run: ask the questions its pipeline answered "
                    "with no model call (the evidence gate) again with the rule off (answer.accept_share 0)")
    args = ap.parse_args()
    out = Path(args.out)
    if args.report:
        report([json.loads(x) for f in args.out.split(",") for x in Path(f).read_text(encoding="utf-8").splitlines()
                if x.strip()])
        return
    WORK.mkdir(parents=True, exist_ok=True)
    db = WORK / "kb.db"
    if not args.reuse or not db.exists():
        for stale in WORK.glob("kb.db*"):
            stale.unlink()
        build(WORK / "docs")
        t0 = time.perf_counter()
        with KnowledgeBase(settings(db, args, False)) as kb:
            kb.add([WORK / "docs"])
        print(f"ingested in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    qs = questions(args.squad, args.cmrc)
    qs = qs[: args.limit] if args.limit else qs
    qs = [q for q in qs if q["kind"] in args.kinds.split(",")] if args.kinds else qs
    if args.before_pass:
        before_pass(args, db, qs, out)
        return
    modes = args.modes.split(",")
    out.write_text("", encoding="utf-8")
    rows: list[dict] = []

    def emit(r: dict) -> None:
        rows.append(r)
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"  {r['mode']:16} {r['kind']:10} ok={int(r['correct'])} ans={int(r['answered'])} "
              f"{r['seconds']:6.1f}s calls={r['calls']} {r['question'][:50]}", file=sys.stderr, flush=True)

    cache: dict = {}
    with KnowledgeBase(settings(db, args, False)) as plain, KnowledgeBase(settings(db, args, bool(args.llm))) as kb:
        for i, q in enumerate(qs):
            gold = gold_paragraph(plain, q, cache)
            if "extractive" in modes:
                a, sec, _, _ = ask(plain, q, "pipeline")
                emit(row(q, "extractive", a, sec, gold))
            if not args.llm:
                continue
            if "pipeline" in modes or "auto" in modes:
                a, sec, acc, _ = ask(kb, q, "pipeline")
                after = row(q, "pipeline", a, sec, gold)
                emit(after)
                emit(before_row(q, "pipeline-before", after, acc, gold))
            route = choose_mode(q["question"], "auto", kb.models.chat.model)
            agent_row = None
            if "agent" in modes and (i % args.agent_every == 0 or route == "agent"):
                a, sec, acc, _ = ask(kb, q, "agent")
                agent_row = row(q, "agent", a, sec, gold, {"sampled": i % args.agent_every == 0})
                emit(agent_row)
                emit(before_row(q, "agent-before", agent_row, acc, gold))
            if "auto" in modes:
                if route == "pipeline":
                    emit({**after, "mode": "auto", "route": "pipeline"})
                elif agent_row is not None:
                    emit({**agent_row, "mode": "auto", "route": "agent"})
    report(rows)


def before_pass(args, db: Path, qs: list[dict], out: Path) -> None:
    """The questions the gate answered with no model call, asked with the rule off: their before rows."""
    rows = [json.loads(x) for x in Path(args.before_pass).read_text(encoding="utf-8").splitlines() if x.strip()]
    gated = {r["question"] for r in rows if r["mode"] == "pipeline" and r["calls"] == 0}
    todo = [q for q in qs if q["question"] in gated]
    print(f"{len(todo)} questions the evidence gate answered without the model", file=sys.stderr, flush=True)
    out.write_text("", encoding="utf-8")
    cache: dict = {}
    with KnowledgeBase(settings(db, args, True, rule=False)) as kb:
        for q in todo:
            a, sec, _, _ = ask(kb, q, "pipeline")
            r = row(q, "pipeline-before", a, sec, gold_paragraph(kb, q, cache), {"before_pass": True})
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            print(f"  before-pass {r['kind']:10} ok={int(r['correct'])} ans={int(r['answered'])} {r['seconds']:6.1f}s "
                  f"{q['question'][:50]}", file=sys.stderr, flush=True)


def report(rows: list[dict]) -> None:
    last: dict[tuple[str, str], dict] = {}
    for r in rows:  # a later row for the same mode and question (a before pass) replaces the earlier one
        last[(r["mode"], r["question"])] = r
    by_mode: dict[str, list[dict]] = {}
    for r in last.values():
        by_mode.setdefault(r["mode"], []).append(r)
    if "pipeline-before" in by_mode:  # main's auto: the agent for an exploring question (the model takes tools)
        agent_before = {r["question"]: r for r in by_mode.get("agent-before", [])}
        by_mode["auto-before"] = [
            {**agent_before[r["question"]], "mode": "auto-before"}
            if main_auto_agent(r["question"]) and r["question"] in agent_before else {**r, "mode": "auto-before"}
            for r in by_mode["pipeline-before"]]
    print("\n| mode | questions | accuracy with citation (answerable) | abstention (unanswerable) | junk sentences | "
          "unverified marks | language match | s / question | calls / question | tokens / question |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode, rs in by_mode.items():
        print(table_row(mode, rs))
    asked = {r["question"] for r in by_mode.get("pipeline", []) if r["calls"] > 0}
    if asked:
        print(f"\non the {len(asked)} questions the pipeline asked the model (the others the evidence gate answered "
              "'not found' with no model call, so their before is not known from this run):")
        for mode in ("extractive", "pipeline", "pipeline-before"):
            sub = [r for r in by_mode.get(mode, []) if r["question"] in asked]
            if sub:
                print(table_row(mode, sub))
    pipe = {r["question"]: r for r in by_mode.get("pipeline", [])}
    agent = by_mode.get("agent", [])
    if agent and pipe:
        same = [pipe[r["question"]] for r in agent if r["question"] in pipe]
        print(f"\nthe agent's questions ({len(agent)}), pipeline on the same: " + table_row("pipeline (same)", same))
    for kind in sorted({r["kind"] for r in rows}):
        print(f"\n### {kind}")
        for mode, rs in by_mode.items():
            sub = [r for r in rs if r["kind"] == kind]
            if sub:
                print(table_row(mode, sub))
    squad = [r for r in by_mode.get("pipeline", []) if r["kind"] in ("squad", "squad-none")]
    if squad:
        cited = [r["cited_gold_paragraph"] for r in squad if r["cited_gold_paragraph"] is not None]
        print(f"\nSQuAD paragraph-level citation accuracy (pipeline): {_share(cited)} over {len(cited)} answered")


def main_auto_agent(question: str) -> bool:
    """Whether main's `auto` gave the question to the agent (any model that takes tools)."""
    from docqa.answer.route import is_catalog_question, wants_exploration

    return wants_exploration(question) and not is_catalog_question(question)


def table_row(mode: str, rs: list[dict]) -> str:
    ans = [r for r in rs if r["kind"] not in ("squad-none", "none")]
    none = [r for r in rs if r["kind"] in ("squad-none", "none")]
    sentences = sum(r["sentences"] for r in rs)
    junk = sum(r["junk"] for r in rs)
    return (f"| {mode} | {len(rs)} | {sum(r['correct'] for r in ans)}/{len(ans)} ({_share([r['correct'] for r in ans])}) "
            f"| {sum(not r['answered'] for r in none)}/{len(none)} | {junk}/{sentences} "
            f"| {sum(r['unverified'] for r in rs)} | {sum(r['language_ok'] for r in rs)}/{len(rs)} "
            f"| {statistics.mean(r['seconds'] for r in rs):.1f} | {statistics.mean(r['calls'] for r in rs):.2f} "
            f"| {statistics.mean(r['tokens'] for r in rs):.0f} |")


def _share(values: list) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "n/a"


if __name__ == "__main__":
    main()
