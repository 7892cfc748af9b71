"""Junk rate: the share of answer sentences that are headings, questions or markup (issue 16).

    python benchmarks/junk_rate.py [--against OTHER/src] [--questions 240] [--seed 16]

Builds a documentation-like corpus from ../shared/data in benchmarks/.work/junk_rate/docs:
- Flask 3.1.1's docstrings as reStructuredText pages (a titled section per module, class and
  function; the docstrings as written, with their field lists, directives and literal blocks),
  the same as Markdown pages (ATX headings, fenced examples) and as HTML pages (navigation, a
  footer, a parameter table);
- an FAQ page in Markdown and one in HTML: a question heading per statement, the statement under it;
- the Flask sources themselves, the Chinese CMRC Markdown file (## sections, a pipe table) and the
  real web page with navigation of the multiformat set.

Questions come from the documents' own statements (seeded, deterministic): a stating sentence's
rarest words make a question ("How does X Y Z work?"); the FAQ questions are also asked as written;
some Chinese questions come from the CMRC statements.  Every question is asked through
`KnowledgeBase.ask` with no chat model (the extractive answerer, shipped settings).

Each published answer sentence (claim) is judged from the documents themselves, not from the
answerer's rule: it is junk when its quoted span overlaps a HEADING block of the reader's output,
ends with a question mark, or holds markup (rST/setext adornment, a directive, a field list, a
table row, a code fence, an HTML tag, a Markdown heading mark).  `--against` runs the same corpus
and questions with another source tree too (e.g. a worktree of main), in the same run.
"""

from __future__ import annotations

import argparse
import ast
import html
import inspect
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data"))
WORK = HERE / ".work" / "junk_rate"
FLASK = DATA / "docs" / "code" / "flask-3.1.1" / "src" / "flask"
CMRC_MD = DATA / "docs" / "multiformat" / "zh" / "cmrc2018-trial-zh-CN.md"
WEB_PAGE = DATA / "docs" / "multiformat" / "web" / "example-with-scripts.html"
FLASK_MODULES = ("app", "helpers", "config", "ctx", "blueprints", "sessions", "templating", "testing", "views",
                 "wrappers", "sansio/app", "sansio/scaffold", "json/__init__")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")
_STOP = frozenset("""the a an and or of to in on for is are be was were by with as at it this that these those
    from if not no can will may should would which what when how why its their there then than also only
    into about any all some such more most other you your use used uses using default true false none
    value values function method class object set get call called return returns yet already still just even
    like has have had been being does did must need needs only first new same each both here want""".split())
_TEMPLATES = ("How does {t} work?", "What about {t}?", "What is {t}?", "When is {t} used?",
              "What does the documentation say about {t}?")
# The judge's markup patterns: independent of the answerer's rule.
_MARKUP = re.compile(
    r"^\s*([=\-~^\"'`+*#])\1{2,}\s*$"  # rST / setext adornment
    r"|^\s*\.\.\s"  # a directive or comment
    r"|\w::(?:\s|$)"  # a directive without its dots
    r"|^\s*:\w[^:`]*:(?:\s|$)"  # a field list
    r"|\|"  # a table row
    r"|^\s*```|^\s*~~~"  # a code fence
    r"|</?[a-zA-Z][\w-]*[ >/]"  # an HTML tag
    r"|^\s*#{1,6}\s", re.M)


# -- the corpus ------------------------------------------------------------------------------
def docstrings(path: Path) -> list[tuple[str, int, str]]:
    """(qualified name, depth, cleaned docstring) of a module, its classes and functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = path.stem if path.stem != "__init__" else path.parent.name
    out = []
    if doc := ast.get_docstring(tree):
        out.append((name, 1, inspect.cleandoc(doc)))

    def walk(node, prefix: str, depth: int) -> None:
        for child in node.body:
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}.{child.name}"
                if (doc := ast.get_docstring(child)) and not child.name.startswith("_"):
                    out.append((qual, depth, inspect.cleandoc(doc)))
                if isinstance(child, ast.ClassDef):
                    walk(child, qual, min(depth + 1, 3))

    walk(tree, name, 2)
    return out


def rst_page(title: str, sections: list[tuple[str, int, str]]) -> str:
    marks = {1: "=", 2: "-", 3: "~"}
    out = ["=" * len(title), title, "=" * len(title), ""]
    for name, depth, doc in sections:
        out += [name, marks[depth] * len(name), "", doc, ""]
    return "\n".join(out)


def md_page(title: str, sections: list[tuple[str, int, str]]) -> str:
    out = [f"# {title}", ""]
    for name, depth, doc in sections:
        body = re.sub(r"(?ms)^(.*::)\n\n((?:    .*\n?|\n)+)", lambda m: f"{m.group(1)[:-1]}\n\n```python\n"
                      f"{inspect.cleandoc(m.group(2))}\n```\n", doc)  # literal blocks become fenced examples
        out += [f"{'#' * (depth + 1)} {name}", "", body, ""]
    return "\n".join(out)


def html_page(title: str, sections: list[tuple[str, int, str]]) -> str:
    nav = '<nav><a href="/">Home</a> | <a href="/api/">API</a> | <a href="/faq/">FAQ</a></nav>'
    body = []
    for name, depth, doc in sections:
        body.append(f"<h{depth + 1}>{html.escape(name)}</h{depth + 1}>")
        params = re.findall(r"^:param (\w+): (.+)$", doc, re.M)
        for para in re.split(r"\n\s*\n", doc):
            if para.startswith(":param"):
                continue
            tag = "pre" if para.startswith(("    ", ">>>")) else "p"
            body.append(f"<{tag}>{html.escape(para)}</{tag}>")
        if params:
            rows = "".join(f"<tr><td>{p}</td><td>{html.escape(d)}</td></tr>" for p, d in params)
            body.append(f"<table><tr><th>Parameter</th><th>Description</th></tr>{rows}</table>")
    return (f"<html><head><title>{html.escape(title)}</title></head><body>{nav}<main><h1>{html.escape(title)}</h1>"
            f"{''.join(body)}</main><footer>Copyright 2010 Pallets. All rights reserved.</footer></body></html>")


def statements(doc: str) -> list[str]:
    """Prose sentences of a docstring that state something (the question sources)."""
    from docqa.text.sentences import split_sentences

    out = []
    for para in re.split(r"\n\s*\n", doc):
        if para.startswith((" ", ":", "..", ">>>", "-", "*")) or para.rstrip().endswith("::"):
            continue
        for s in split_sentences(" ".join(para.split())):
            if s.endswith(".") and 8 <= len(s.split()) <= 40 and "::" not in s and not s.startswith(":"):
                out.append(s)
    return out


def key_terms(sentence: str, df: Counter, rng: random.Random) -> str:
    text = re.sub(r"\w+'\w+", " ", sentence.replace("``", " ").replace("`", " "))  # no contractions
    words = [w.strip(".") for w in _WORD.findall(text)]
    words = [w for w in dict.fromkeys(words) if w.lower() not in _STOP and len(w) > 3]
    # the rarest words, longer first among equals: a question names what the statement is about
    rare = sorted(words, key=lambda w: (min(df[w.lower()], 8), -len(w)))[: rng.choice((2, 3, 3, 4))]
    return " ".join(w for w in words if w in rare)


def zh_questions(rng: random.Random, count: int) -> list[dict]:
    text = CMRC_MD.read_text(encoding="utf-8")
    sentences = [s for s in re.findall(r"[^。\n]{12,60}。", text) if "|" not in s]
    out = []
    for s in rng.sample(sentences, min(count, len(sentences))):
        core = s.rstrip("。")
        out.append({"question": f"{core[: max(6, len(core) // 2)]}是怎样的？", "source": "cmrc", "kind": "zh"})
    return out


def build(questions: int, seed: int) -> list[dict]:
    """Write the corpus and return the questions (deterministic for a seed)."""
    rng = random.Random(seed)
    docs = WORK / "docs"
    for sub in ("rst", "md", "html", "faq", "code", "other"):
        (docs / sub).mkdir(parents=True, exist_ok=True)
    found: list[tuple[str, str]] = []  # (module, statement)
    for module in FLASK_MODULES:
        path = FLASK / f"{module}.py"
        sections = docstrings(path)
        title = "flask." + module.replace("/", ".").replace(".__init__", "")
        stem = module.replace("/", "-")
        (docs / "rst" / f"{stem}.rst").write_text(rst_page(title, sections), encoding="utf-8")
        (docs / "md" / f"{stem}.md").write_text(md_page(title, sections), encoding="utf-8")
        (docs / "html" / f"{stem}.html").write_text(html_page(title, sections), encoding="utf-8")
        (docs / "code" / f"{stem}.py").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        found += [(title, s) for _, _, doc in sections for s in statements(doc)]
    (docs / "other" / "cmrc.md").write_text(CMRC_MD.read_text(encoding="utf-8"), encoding="utf-8")
    (docs / "other" / "page.html").write_bytes(WEB_PAGE.read_bytes())
    df = Counter(w.lower() for _, s in found for w in set(_WORD.findall(s)))
    found = list(dict.fromkeys(found))
    rng.shuffle(found)
    n_faq = questions // 4
    n_zh = max(questions // 12, 10)
    asked = []
    faq = []
    for i, (module, sentence) in enumerate(found[: questions - n_zh]):
        question = rng.choice(_TEMPLATES).format(t=key_terms(sentence, df, rng))
        asked.append({"question": question, "source": module, "kind": "faq" if i < n_faq else "statement",
                      "statement": sentence})
        if i < n_faq:
            faq.append((question, sentence))
    md = ["# Flask FAQ", ""] + [f"## {q}\n\n{a}\n" for q, a in faq]
    (docs / "faq" / "faq.md").write_text("\n".join(md), encoding="utf-8")
    items = "".join(f"<h2>{html.escape(q)}</h2><p>{html.escape(a)}</p>" for q, a in faq)
    (docs / "faq" / "faq.html").write_text(
        f"<html><head><title>FAQ</title></head><body><nav><a href='/'>Home</a> | <a href='/faq/'>FAQ</a></nav>"
        f"<main><h1>Frequently asked questions</h1>{items}</main><footer>Copyright 2010 Pallets.</footer></body></html>",
        encoding="utf-8")
    return asked + zh_questions(rng, n_zh)


# -- one source tree: ingest, ask, judge -----------------------------------------------------
def judge(quote: str, start: int, end: int, headings: list[tuple[int, int]]) -> str | None:
    if any(s < end and start < e for s, e in headings):
        return "heading"
    if re.search(r"[?？][\"'”’)\]]*\s*$", quote.strip()):
        return "question"
    if _MARKUP.search(quote):
        return "markup"
    return None


def _same(quote: str, statement: str) -> bool:
    """The quote is (part of) the statement, or holds it."""
    q, s = (re.sub(r"[\W_]+", " ", x).strip().lower() for x in (quote, statement))
    return bool(q) and (q in s or s[:60] in q)


def worker(kb_path: Path, questions: list[dict]) -> dict:
    from docqa.ingest.readers.registry import read_file
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings
    from docqa.types import HEADING

    for stale in kb_path.parent.glob(kb_path.name + "*"):
        stale.unlink()
    settings = Settings(kb=str(kb_path), llm={"provider": "none"})
    heads: dict[str, list[tuple[int, int]]] = {}
    counts: Counter = Counter()
    examples: list[dict] = []
    numbering_ok = 0
    t0 = time.perf_counter()
    with KnowledgeBase(settings) as kb:
        kb.add([WORK / "docs"])
        ingest = time.perf_counter() - t0
        for item in questions:
            answer = kb.ask(item["question"])
            counts["questions"] += 1
            if not answer.answerable:
                counts["not_found"] += 1
                continue
            counts["answered"] += 1
            if "statement" in item:  # the statement the question was made from: was it quoted?
                counts["with_statement"] += 1
                counts["statement_quoted"] += any(_same(c.quote, item["statement"]) for c in answer.citations)
            numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)]
            first_use = list(dict.fromkeys(numbers))
            by_n = {}
            one_each = all(by_n.setdefault(c.n, c.chunk_id) == c.chunk_id for c in answer.citations)
            numbering_ok += first_use == list(range(1, len(first_use) + 1)) and one_each
            bad_here = 0
            for claim in answer.claims:
                for c in claim.citations[:1]:
                    if c.path not in heads:
                        doc = read_file(Path(c.path))
                        heads[c.path] = [(b.start, b.end) for b in doc.blocks if b.kind == HEADING]
                    kind = judge(c.quote, c.char_start, c.char_end, heads[c.path])
                    counts["sentences"] += 1
                    if kind:
                        counts[kind] += 1
                        bad_here += 1
                        if len(examples) < 8:
                            examples.append({"question": item["question"], "kind": kind, "quote": c.quote[:160]})
            counts["answers_with_junk"] += bad_here > 0
    asked = time.perf_counter() - t0 - ingest
    junk = counts["heading"] + counts["question"] + counts["markup"]
    return {"questions": counts["questions"], "answered": counts["answered"], "not_found": counts["not_found"],
            "sentences": counts["sentences"], "junk": junk,
            "junk_rate": round(junk / max(counts["sentences"], 1), 4),
            "heading": counts["heading"], "question": counts["question"], "markup": counts["markup"],
            "answers_with_junk": counts["answers_with_junk"],
            "statement_quoted": counts["statement_quoted"],
            "statement_questions": sum("statement" in q for q in questions),
            "numbered_1_to_n": round(numbering_ok / max(counts["answered"], 1), 4),
            "ingest_s": round(ingest, 1), "seconds_per_question": round(asked / max(counts["questions"], 1), 3),
            "examples": examples}


def run_tree(src: Path, name: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, __file__, "--worker", name]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{name} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=240)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--against", default="", help="another source tree (its src/) to measure in the same run")
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        questions = json.loads((WORK / "questions.json").read_text(encoding="utf-8"))
        print(json.dumps(worker(WORK / f"{args.worker}.db", questions)))
        return
    WORK.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(HERE.parent / "src"))
    questions = build(args.questions, args.seed)
    (WORK / "questions.json").write_text(json.dumps(questions, ensure_ascii=False, indent=1), encoding="utf-8")
    kinds = Counter(q["kind"] for q in questions)
    print(f"## junk rate: {len(questions)} questions ({dict(kinds)}), {sum(1 for _ in (WORK / 'docs').rglob('*.*'))} "
          f"documents, seed {args.seed}\n")
    runs = {}
    if args.against:
        runs["before"] = run_tree(Path(args.against).resolve(), "before")
    runs["after" if args.against else "this tree"] = run_tree(HERE.parent / "src", "after")
    print("| run | answered / asked | answer sentences | junk rate | headings | questions | markup "
          "| answers with junk | source statement quoted | numbered 1..n | s / question |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in runs.items():
        print(f"| {name} | {r['answered']} / {r['questions']} | {r['sentences']} | {r['junk_rate']:.3f} | {r['heading']} "
              f"| {r['question']} | {r['markup']} | {r['answers_with_junk']} "
              f"| {r['statement_quoted']} / {r['statement_questions']} | {r['numbered_1_to_n']:.3f} "
              f"| {r['seconds_per_question']} |")
    print("\n" + json.dumps(runs, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
