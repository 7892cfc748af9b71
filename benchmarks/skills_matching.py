"""Skill matching without a model: does a task question load its built-in skill, and does an
ordinary question load none?  And what each level of disclosure costs in prompt tokens.

    nice -n 10 python benchmarks/skills_matching.py [--similarity 0.3] [--max-active 2]

Task questions: the 12 of benchmarks/skills.py plus 16 written for this (English and Chinese),
each with the skill it needs.  Ordinary questions: 200 SQuAD 2.0 questions and 100 CMRC 2018
questions from ../shared/data (every n-th, deterministic): factual questions no skill fits.
Matching as an agent run does it (docqa.skills.match: triggers, then cosine similarity with the
default embedder, at most max_active skills).  Baseline in the same run: triggers only (no embedder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
sys.path.insert(0, str(HERE))

from docqa.embed.local import LocalEmbedder  # noqa: E402
from docqa.skills import BUILTIN, ActiveSkills, load_skills, match  # noqa: E402
from docqa.skills.active import procedure  # noqa: E402
from docqa.text.tokens import count_tokens  # noqa: E402
from skills import TASKS  # noqa: E402  (benchmarks/skills.py)

MORE = [
    ("compare-versions", "How does the 2024 handbook differ from the 2023 one?"),
    ("compare-versions", "What is new in the second draft of the contract?"),
    ("compare-versions", "这份政策的新版本和旧版本有什么区别？"),
    ("summarise-collection", "Summarize what the onboarding folder contains."),
    ("summarise-collection", "What are the documents in the finance collection about?"),
    ("summarise-collection", "请总结一下合同文件夹里的文档。"),
    ("find-mentions", "List all mentions of the vendor Acme across the files."),
    ("find-mentions", "Where is error code E1042 mentioned?"),
    ("find-mentions", "哪些文档提到了张三？"),
    ("answer-from-table", "Which region had the highest revenue in the sales spreadsheet?"),
    ("answer-from-table", "What is the average salary in the staff table?"),
    ("answer-from-table", "表格中哪个产品的价格最低？"),
    ("write-procedure", "Walk me through resetting a user's password."),
    ("write-procedure", "What are the steps to deploy the service to production?"),
    ("write-procedure", "如何配置备份？请给出步骤。"),
    ("write-procedure", "How do I install the agent on Windows?"),
]


def ordinary() -> list[str]:
    squad = [json.loads(line)["question"] for line in (DATA / "qa" / "squad2-dev-subset" / "questions.jsonl").open()]
    cmrc = [json.loads(line)["text"] for line in (DATA / "retrieval" / "cmrc2018-dev" / "queries.jsonl").open()]
    return squad[:: max(1, len(squad) // 200)][:200] + cmrc[:: max(1, len(cmrc) // 100)][:100]


def score(tasks: list[tuple[str, str]], others: list[str], embed, similarity: float, limit: int) -> dict:
    skills = list(load_skills([(BUILTIN, "builtin")]))
    t0 = time.perf_counter()
    hits = [match(q, skills, embed, similarity, limit) for _, q in tasks]
    false = [match(q, skills, embed, similarity, limit) for q in others]
    seconds = time.perf_counter() - t0
    right = sum(any(m.skill.name == want for m in found) for (want, _), found in zip(tasks, hits))
    first = sum(bool(found) and found[0].skill.name == want for (want, _), found in zip(tasks, hits))
    misses = [q for (want, q), found in zip(tasks, hits) if not any(m.skill.name == want for m in found)]
    fired = [(q, [m.skill.name for m in found]) for q, found in zip(others, false) if found]
    return {"task_questions": len(tasks), "right_skill_loaded": right, "right_skill_first": first,
            "loaded_per_task_question": round(sum(len(h) for h in hits) / len(tasks), 2),
            "ordinary_questions": len(others), "ordinary_with_a_skill": len(fired),
            "ms_per_question": round(1000 * seconds / (len(tasks) + len(others)), 1),
            "missed": misses, "fired_on": fired[:10]}


def costs() -> dict:
    skills = load_skills([(BUILTIN, "builtin")])
    index = ActiveSkills(skills, []).index()
    return {"level1_index_tokens": count_tokens(index),
            "level2_procedure_tokens": {s.name: count_tokens(procedure(s)) for s in skills}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--similarity", type=float, default=0.3)
    ap.add_argument("--max-active", type=int, default=2)
    args = ap.parse_args()
    tasks = [(t.skill, t.question) for t in TASKS] + MORE
    others = ordinary()
    embedder = LocalEmbedder()
    embed = lambda texts, kind: embedder.embed_batch(texts, kind)  # noqa: E731
    result = {"triggers_and_similarity": score(tasks, others, embed, args.similarity, args.max_active),
              "triggers_only (baseline)": score(tasks, others, None, args.similarity, args.max_active),
              "cost": costs()}
    print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
