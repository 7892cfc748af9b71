"""Skills with a real model: the agent on tasks that fit the built-in skills, with and without skills.

    nice -n 10 python benchmarks/skills.py [--llm BASE_URL --model NAME] [--tasks N] [--first I]
                                           [--condition both|without|with] [--out FILE]
    python benchmarks/skills.py --summarise FILE...      (the summary of results files, merged)

On a busy machine run one process per condition (and per half of the tasks, --first 7): each
serves its own model, so the conditions run side by side under the same load.

Without --llm it serves the installed local model (Qwen2.5-Coder-1.5B, 'docqa model install')
itself on loopback and stops it at the end.  The corpus is built from ../shared/data in a work
folder: three SQuAD articles (articles/), the CSV, Markdown and JSON tables of the multiformat set
(tables/), Flask's config and blueprint modules (flask/), and two versions of the first paragraphs
of the steam engine article (versions/: v2 changes two dates, drops the injector paragraph and adds
one sentence, so the differences are known).

Each task runs twice in agent mode, one after the other: skills off (skills.enabled = false) and
skills on (built-in skills, matched automatically).  A task succeeds when the run ends SUCCESS
with at least one citation and its answer holds the expected terms (at least `need` of the term
groups; a group is a list of alternatives, case-insensitive).  Reported per condition: successes,
tokens (prompt + completion), agent steps (model turns), tool calls, seconds; and which skills
were loaded, and why.  The fact-check is off in both conditions (agent.check = false) so the
figures are the agent's own work.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
WORK = HERE / ".work" / "skills"

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402


@dataclass(frozen=True)
class Task:
    skill: str  # the built-in skill it fits
    question: str
    expect: tuple[tuple[str, ...], ...]  # groups of alternatives
    need: int = 0  # groups that must be found (0: all)


TASKS = [
    Task("compare-versions", "What changed between steam-engine-v1 and steam-engine-v2?",
         (("1715",), ("march",), ("injector",), ("80%", "80 per", "eighty")), need=2),
    Task("compare-versions", "Compare version 1 and version 2 of the steam engine article: which paragraph was "
         "removed in version 2?", (("injector",),)),
    Task("summarise-collection", "Summarise the documents in the articles folder.",
         (("oil",), ("packet",), ("steam",))),
    Task("summarise-collection", "Give an overview of the documents in the tables folder.",
         (("stanley", "cup"), ("apple", "banana"), ("trowel", "watering", "shears", "garden"))),
    Task("find-mentions", "Find every mention of Kissinger in the documents, with its context.",
         (("kissinger",), ("oil", "embargo", "israel", "negotiat"))),
    Task("find-mentions", "Which documents mention Newcomen? List each mention.", (("newcomen",), ("steam",))),
    Task("answer-from-table", "In the Stanley Cups table, which team has won the most Stanley Cups, and how many?",
         (("maple leafs",), ("13",))),
    Task("answer-from-table", "According to the table, how many Juicy Apples are in stock?", (("739",),)),
    Task("answer-from-table", "Which products in the product records are not in stock?", (("watering can",),)),
    Task("answer-from-table", "What is the price of the Pruning Shears in the product records table?", (("24.99",),)),
    Task("write-procedure", "Step by step, how do I load the Flask configuration from a file named by an "
         "environment variable?", (("from_envvar",), ("export", "environment variable"))),
    Task("write-procedure", "How do I register a blueprint on a Flask application? Give the steps.",
         (("register_blueprint",),)),
]


def interleaved(tasks: list[Task]) -> list[Task]:
    """One task of each skill in turn, so the first N cover every skill."""
    by_skill: dict[str, list[Task]] = {}
    for t in tasks:
        by_skill.setdefault(t.skill, []).append(t)
    out = []
    while any(by_skill.values()):
        out += [group.pop(0) for group in by_skill.values() if group]
    return out


def build_corpus(root: Path) -> Path:
    """The benchmark's documents, copied (and two derived) from ../shared/data."""
    docs = root / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    squad = DATA / "qa" / "squad2-dev-subset" / "docs"
    multi = DATA / "docs" / "multiformat" / "text"
    flask = DATA / "docs" / "code" / "flask-3.1.1" / "src" / "flask"
    for folder, files in {"articles": [squad / "1973_oil_crisis.md", squad / "Packet_switching.md", squad / "Steam_engine.md"],
                          "tables": [multi / "stanley-cups.csv", multi / "simple-table.md", multi / "arbitrary-records.json"],
                          "flask": [flask / "config.py", flask / "sansio" / "blueprints.py"]}.items():
        (docs / folder).mkdir(parents=True)
        for f in files:
            shutil.copyfile(f, docs / folder / f.name)
    paragraphs = (squad / "Steam_engine.md").read_text(encoding="utf-8").split("\n\n")[:6]
    v1 = "\n\n".join(["# Steam engine (version 1)", *paragraphs[1:]]) + "\n"
    v2_paragraphs = [p.replace("around 1712", "around 1715").replace("21 February 1804", "21 March 1804")
                     for p in paragraphs[1:] if "injector" not in p]
    v2_paragraphs.append("Steam turbines generate about 80% of the world's electricity today.")
    v2 = "\n\n".join(["# Steam engine (version 2)", *v2_paragraphs]) + "\n"
    (docs / "versions").mkdir()
    (docs / "versions" / "steam-engine-v1.md").write_text(v1, encoding="utf-8")
    (docs / "versions" / "steam-engine-v2.md").write_text(v2, encoding="utf-8")
    return docs


def succeeded(task: Task, answer) -> tuple[bool, int]:
    text = answer.answer.lower()
    found = sum(any(alt in text for alt in group) for group in task.expect)
    need = task.need or len(task.expect)
    return answer.status == "SUCCESS" and bool(answer.citations) and found >= need, found


def run_one(kb: KnowledgeBase, task: Task) -> dict:
    t0 = time.perf_counter()
    answer = kb.ask(task.question, mode="agent", record=True)
    seconds = time.perf_counter() - t0
    trace = kb.log.run(answer.run_id).trace if answer.run_id else []
    ok, found = succeeded(task, answer)
    accepting = [t for t in trace if t.get("stage") == "accepting"]
    attempt = accepting[-1].get("attempt", "") if accepting else answer.answer  # the agent's own final answer
    attempt_found = sum(any(alt in attempt.lower() for alt in group) for group in task.expect)
    return {"ok": ok, "found": found, "attempt_found": attempt_found,
            "attempt_ok": attempt_found >= (task.need or len(task.expect)),
            "acceptance": answer.retrieval.to_dict().get("acceptance"), "status": answer.status, "tokens": answer.usage.get("total_tokens", 0),
            "model_calls": answer.usage.get("model_calls", 0),
            "steps": sum(1 for t in trace if t.get("stage") == "thinking"),
            "tools": [t["name"] for t in trace if t.get("stage") == "tool"],
            "skills": answer.retrieval.to_dict().get("skills", []), "citations": len(answer.citations),
            "seconds": round(seconds, 1), "answer": answer.answer[:600], "notes": answer.notes}


def settings_for(db: Path, llm: dict, skills: bool, max_steps: int) -> Settings:
    # lean budgets (the same in both conditions): results of at most 2,000 characters, 3 hits a search; wall time
    # is not the limit (a busy machine serves the model at a few tokens a second): steps are
    return Settings(kb=str(db), llm=llm, skills={"enabled": skills},
                    agent={"check": False, "max_steps": max_steps, "max_wall_seconds": 5400, "max_tokens": 40000,
                           "max_result_chars": 2000, "search_top_k": 3})


def summary(rows: list[dict]) -> dict:
    unique: dict[tuple[int, str], dict] = {}
    for r in rows:  # a task run by two processes counts once (the first result)
        unique.setdefault((r["task"], r["condition"]), r)
    rows = list(unique.values())
    out = {}
    for condition in ("without", "with"):
        mine = [r for r in rows if r["condition"] == condition]
        if not mine:
            continue
        n = len(mine)
        out[condition] = {"tasks": n, "success": sum(r["ok"] for r in mine),
                          "agent_answer_has_the_terms": sum(bool(r.get("attempt_ok")) for r in mine),
                          "tokens_mean": round(sum(r["tokens"] for r in mine) / n),
                          "steps_mean": round(sum(r["steps"] for r in mine) / n, 2),
                          "tool_calls_mean": round(sum(len(r["tools"]) for r in mine) / n, 2),
                          "seconds_mean": round(sum(r["seconds"] for r in mine) / n, 1),
                          "skill_loaded": sum(bool(r["skills"]) for r in mine),
                          "right_skill": sum(any(s["name"] == r["skill"] for s in r["skills"]) for r in mine)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llm", default="", help="an OpenAI-compatible server (default: serve the local model here)")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--tasks", type=int, default=len(TASKS), help="the first N tasks")
    ap.add_argument("--first", type=int, default=1, help="start at this task (to split the tasks over processes)")
    ap.add_argument("--max-steps", type=int, default=4)
    ap.add_argument("--condition", choices=["both", "without", "with"], default="both",
                    help="one condition only (two processes, one per condition, share a busy machine's CPU better)")
    ap.add_argument("--out", type=Path, default=WORK / "results.jsonl")
    ap.add_argument("--summarise", type=Path, nargs="*", help="only print the summary of these results files")
    args = ap.parse_args()
    if args.summarise:
        rows = [json.loads(line) for f in args.summarise for line in f.read_text(encoding="utf-8").splitlines() if line]
        print(json.dumps(summary(rows), indent=2))
        return
    work = WORK / f"{args.condition}-{args.first}"
    work.mkdir(parents=True, exist_ok=True)
    docs = build_corpus(work)
    db = work / "kb.db"
    for stale in work.glob("kb.db*"):
        stale.unlink()
    server = None
    base_url = args.llm
    if not base_url:
        from docqa.llm.local import default_models_dir
        from docqa.llm.server import LocalServing, ManagedServer

        server = ManagedServer(LocalServing(default_models_dir(), ctx=8192))
        base_url = server.url
    llm = {"provider": "openai", "base_url": base_url, "model": args.model, "max_tokens": 256, "context_window": 8192,
           "timeout": 3600, "temperature": 0.0, "max_retries": 0}
    rows: list[dict] = []
    try:
        if server is not None:
            server.wait_ready(600)
        with KnowledgeBase(settings_for(db, llm, False, args.max_steps)) as base:
            report = base.add([docs])
            print(f"ingested {len(report.added) if hasattr(report, 'added') else report}", file=sys.stderr)
            kbs = {"without": base, "with": KnowledgeBase(settings_for(db, llm, True, args.max_steps),
                                                         embedder=base.models.embedder, chat_model=base.models.chat)}
            with args.out.open("w", encoding="utf-8") as out:
                for i, task in enumerate(interleaved(TASKS)[: args.tasks], start=1):
                    if i < args.first:
                        continue
                    for condition, kb in kbs.items():
                        if args.condition not in ("both", condition):
                            continue
                        row = {"task": i, "skill": task.skill, "question": task.question, "condition": condition,
                               **run_one(kb, task)}
                        rows.append(row)
                        out.write(json.dumps(row, ensure_ascii=False) + "\n")
                        out.flush()
                        print(f"task {i:2} {condition:7} ok={row['ok']!s:5} tokens={row['tokens']:6} steps={row['steps']} "
                              f"tools={','.join(row['tools'])} skills={[s['name'] for s in row['skills']]} "
                              f"{row['seconds']} s", file=sys.stderr, flush=True)
            kbs["with"].close()
    finally:
        if server is not None:
            server.stop()
    print(json.dumps(summary(rows), indent=2))


if __name__ == "__main__":
    main()
