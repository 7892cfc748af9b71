"""Cross-lingual retrieval through the whole index: Chinese questions over English passages and
English questions over Chinese passages, in one mixed-language knowledge base, per search mode.

    python benchmarks/crosslingual.py [multilingual-e5-small]

The knowledge base holds the 20 English target passages of embed_candidates.py (hand-made
zh question -> en passage pairs), 12 Chinese target passages written for the reverse direction,
200 SciFact abstracts and 200 CMRC 2018 paragraphs as distractors (both languages).  Reported:
hit@1 and MRR@10 of the target passage.  BM25 is the baseline: it shares no term across languages.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_candidates import XLING  # noqa: E402

from docqa.embed import make_embedder  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data")) / "retrieval"
WORK = HERE / ".work" / "crosslingual"

REVERSE = [  # (English question, Chinese passage)
    ("How many days of paid annual leave do employees get?", "员工每年享有十五天带薪年假，未休完的年假可以顺延到次年第一季度。"),
    ("What is the nightly hotel limit on business trips?", "出差住宿标准为每晚不超过五百元，超出部分需要部门负责人审批。"),
    ("When is the full database backup taken?", "每天凌晨两点进行一次全量数据库备份，备份文件保留三十五天。"),
    ("How quickly must the on-call engineer acknowledge an alert?", "值班工程师必须在五分钟内确认告警，否则告警会自动升级给主管。"),
    ("Which river is the longest in China?", "长江全长约六千三百公里，是中国第一长河，也是世界第三长河。"),
    ("What does the panda mainly eat?", "大熊猫的食物百分之九十九是竹子，每天要花十几个小时进食。"),
    ("How tall is Mount Everest?", "珠穆朗玛峰海拔八千八百四十八米，是世界最高峰，位于中国和尼泊尔边境。"),
    ("When was paper making improved by Cai Lun?", "东汉时期蔡伦改进了造纸术，用树皮、麻头和破布造纸，大大降低了成本。"),
    ("How do vaccines protect against disease?", "疫苗通过刺激免疫系统产生抗体和记忆细胞，使人体在接触病原体时能够迅速作出反应。"),
    ("Why is the sky blue?", "天空呈现蓝色是因为大气分子对短波长的蓝光散射更强，这种现象称为瑞利散射。"),
    ("How long does it take light from the Sun to reach Earth?", "太阳光到达地球大约需要八分二十秒，日地平均距离约为一亿五千万公里。"),
    ("What is the capital of Australia?", "澳大利亚的首都是堪培拉，而不是人们常以为的悉尼或墨尔本。"),
]


def build(root: Path) -> dict[str, str]:
    """Write the corpus; return question -> target file name."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    target = {}
    for i, (question, passage) in enumerate(XLING):
        (root / f"en-target-{i:02}.txt").write_text(passage + "\n", encoding="utf-8")
        target[question] = f"en-target-{i:02}.txt"
    for i, (question, passage) in enumerate(REVERSE):
        (root / f"zh-target-{i:02}.txt").write_text(passage + "\n", encoding="utf-8")
        target[question] = f"zh-target-{i:02}.txt"
    rng = random.Random(7)
    controls = []
    for name, lang in (("scifact", "en"), ("cmrc2018-dev", "zh")):
        docs = [json.loads(line) for line in (DATA / name / "corpus.jsonl").open(encoding="utf-8")]
        sample = rng.sample(docs, 200)
        for doc in sample:
            (root / f"{lang}-distractor-{doc['_id']}.txt").write_text(f"{doc.get('title', '')}\n\n{doc['text']}\n", encoding="utf-8")
        # same-language controls: this set's own questions whose one relevant document was sampled
        ids = {d["_id"] for d in sample}
        queries = {json.loads(line)["_id"]: json.loads(line)["text"] for line in (DATA / name / "queries.jsonl").open(encoding="utf-8")}
        gold: dict[str, list[str]] = {}
        for line in list((DATA / name / "qrels" / "test.tsv").open(encoding="utf-8"))[1:]:
            qid, did, _ = line.rstrip("\n").split("\t")
            gold.setdefault(qid, []).append(did)
        mine = [(queries[q], f"{lang}-distractor-{d[0]}.txt") for q, d in gold.items() if len(d) == 1 and d[0] in ids]
        controls.append((f"{lang} question -> {lang} passage (control)", mine[:100]))
    return target, controls


def main() -> None:
    target, controls = build(WORK / "docs")
    for _, pairs in controls:
        target.update(dict(pairs))
    db = WORK / "kb.db"
    for stale in WORK.glob("kb.db*"):
        stale.unlink()
    model = sys.argv[1] if len(sys.argv) > 1 else ""
    with KnowledgeBase(Settings(kb=str(db), embed={"provider": "local", "model": model}), embedder=make_embedder("local", model)) as kb:
        kb.add([WORK / "docs"])
        print(f"{kb.status.stats()['documents']} documents; zh->en {len(XLING)} questions, en->zh {len(REVERSE)} questions")
        print("\n| direction | mode | hit@1 | MRR@10 |\n|---|---|---|---|")
        for label, pairs in (("zh question -> en passage", XLING), ("en question -> zh passage", REVERSE), *controls):
            for mode in ("bm25", "dense", "hybrid"):
                hits1, rr = 0, 0.0
                for question, _ in pairs:
                    names = [Path(h.path).name for h in kb.search(question, top_k=10, mode=mode)]
                    if target[question] in names:
                        rank = names.index(target[question]) + 1
                        hits1 += rank == 1
                        rr += 1 / rank
                label_mode = "bm25 (baseline)" if mode == "bm25" else mode
                print(f"| {label} | {label_mode} | {hits1}/{len(pairs)} | {rr / len(pairs):.3f} |")


if __name__ == "__main__":
    main()
