"""The trust dev set: questions over real documentation, their corpus, and the checks that keep them honest.

    python benchmarks/trust/devset.py build [--out DIR]   # assemble the corpus tree
    python benchmarks/trust/devset.py check               # validate every questions_*.jsonl against the corpus
    python benchmarks/trust/devset.py stats               # counts by split, docset, lang, kind, answerable
    python benchmarks/trust/devset.py text FILE           # the text docqa extracts from a corpus file (for writers)

Corpus: every `benchmarks/trust/corpus_*.tsv`, one row per file, `docset<TAB>source<TAB>relative_path`
(blank lines and lines starting with `#` are ignored).  `source` is
  - `usrdoc`: relative_path is under /usr/share/doc, or under /usr/share when it starts with `man/`
    (`man/man1/ls.1.gz` -> /usr/share/man/man1/ls.1.gz);
  - `deb:PACKAGE=VERSION`: the same rule inside the package's files (usr/share/doc/... or usr/share/man/...);
    taken from this machine when that exact version is installed, else `apt-get download PACKAGE=VERSION`
    into benchmarks/.work/trust/debs and `dpkg-deb -x`;
  - `shared`: relative_path is under ../shared/data (DOCQA_DATA overrides).
`build` copies each file (symlinks followed, .gz files kept as they are) to
`benchmarks/.work/trust/corpus/<docset>/<relative_path>`; that folder is what the evaluation adds to docqa.

Convention for questions (questions_*.jsonl, schema in benchmarks/trust/README.md): `evidence[].file` and `near`
are the relative_path exactly as in the tsv row, WITHOUT the docset prefix; relative paths are unique across
all corpus files, so `file` resolves to `<docset>/<relative_path>` in the built tree (`corpus_path`).
Quotes are checked verbatim, after collapsing whitespace, against the text docqa's own reader registry
extracts from the file (`docqa.ingest.readers.read_file`, what `docqa add` indexes).

The split is not a field: `split(id)` is "dev" when the sha256 of the id is even, else "test" -- except the third
split, "valid": the questions of `questions_valid.jsonl`, whose ids are `<docset>-v<nnn>` (and only theirs).  They were
written after dev had been tuned on for eight rounds, to measure how a change generalises without reading test; no fit
script may fit on them (the fits take split == "dev" only).  More dev questions, written in the tenth stop from the
documents before docqa ran on them, are in `questions_dev2.jsonl` with ids `<docset>-d<nnn>`: all of them are dev.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".work" / "trust"
CORPUS_OUT = WORK / "corpus"
DEB_CACHE = WORK / "debs"
TEXT_CACHE = WORK / "text"
USRDOC = Path("/usr/share/doc")
USRSHARE = Path("/usr/share")
MARKER = ".trust-corpus"  # written into a built corpus folder: build only prunes folders it made

KINDS = {"fact", "number", "name", "procedure", "list", "version", "multihop", "crosslingual", "conversational"}
LANGS = {"en", "zh"}
REQUIRED = {"id", "docset", "lang", "kind", "question", "answerable", "answers", "evidence"}
OPTIONAL = {"near", "note"}
VALID_FILE = "questions_valid.jsonl"  # the validation split: its ids, and only its ids, are <docset>-v<nnn>
VALID_ID = re.compile(r".+-v\d{3,}")
DEV2_FILE = "questions_dev2.jsonl"  # more dev questions, written in the tenth stop: ids <docset>-d<nnn>, all in dev
DEV2_ID = re.compile(r".+-d\d{3,}")


def data_root() -> Path:
    """../shared/data (DOCQA_DATA overrides): where `shared` rows live."""
    return Path(os.environ.get("DOCQA_DATA", HERE.parents[2] / "shared" / "data"))


class DevsetError(Exception):
    """A corpus or question file that cannot be used as it is."""


@dataclass(frozen=True)
class CorpusFile:
    docset: str
    source: str
    relative_path: str
    tsv: str  # which corpus_*.tsv and line, for messages

    @property
    def built(self) -> Path:
        """Where `build` puts the file: <docset>/<relative_path> under the corpus folder."""
        return Path(self.docset) / self.relative_path


def split(qid: str) -> str:
    """"valid" for a validation question's id (`<docset>-v<nnn>`), else "dev" or "test" by a stable hash (about 50/50)."""
    if VALID_ID.fullmatch(qid):
        return "valid"
    if DEV2_ID.fullmatch(qid):
        return "dev"
    return "dev" if int(hashlib.sha256(qid.encode("utf-8")).hexdigest(), 16) % 2 == 0 else "test"


def collapse(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped: what "verbatim" quotes are compared on."""
    return " ".join(text.split())


def squash(text: str) -> str:
    """Lower case, no whitespace at all: what answer strings are matched on."""
    return re.sub(r"\s+", "", text).lower()


# ---------------------------------------------------------------- corpus

def load_corpus(folder: Path = HERE) -> dict[str, CorpusFile]:
    """Every corpus_*.tsv row, by relative_path; DevsetError on a malformed or duplicate row."""
    files: dict[str, CorpusFile] = {}
    tsvs = sorted(folder.glob("corpus_*.tsv"))
    if not tsvs:
        raise DevsetError(f"no corpus_*.tsv in {folder}")
    for tsv in tsvs:
        for n, line in enumerate(tsv.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            where = f"{tsv.name}:{n}"
            cols = line.split("\t")
            if len(cols) != 3 or not all(c.strip() for c in cols):
                raise DevsetError(f"{where}: expected docset<TAB>source<TAB>relative_path, got {line!r}")
            docset, source, rel = (c.strip() for c in cols)
            if not (source in ("usrdoc", "shared") or re.fullmatch(r"deb:[a-z0-9][a-z0-9+.-]*=\S+", source)):
                raise DevsetError(f"{where}: source must be usrdoc, shared or deb:PACKAGE=VERSION, got {source!r}")
            if rel.startswith("/") or ".." in Path(rel).parts:
                raise DevsetError(f"{where}: relative_path must be relative and stay inside its root: {rel!r}")
            if rel in files:
                raise DevsetError(f"{where}: relative_path {rel!r} already listed at {files[rel].tsv}")
            files[rel] = CorpusFile(docset, source, rel, where)
    return files


def corpus_path(rel: str, corpus: dict[str, CorpusFile] | None = None) -> str:
    """`<docset>/<relative_path>` of an evidence file or `near`: its place in the built tree, which is also the path
    docqa reports for it when the built folder is what was added (e.g. `git-relnotes/git/RelNotes/2.39.5.txt`)."""
    corpus = load_corpus() if corpus is None else corpus
    if rel not in corpus:
        raise DevsetError(f"{rel!r} is not a relative_path of any corpus_*.tsv")
    return corpus[rel].built.as_posix()


def _under_share(root: Path, rel: str) -> Path:
    """`man/...` under <root>/usr/share (or /usr/share), anything else under .../share/doc."""
    share = root / "usr" / "share" if root != USRSHARE else USRSHARE
    return share / rel if rel.startswith("man/") else share / "doc" / rel


def _installed_version(package: str) -> str | None:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def _deb_root(package: str, version: str) -> Path:
    """The extracted files of PACKAGE=VERSION, downloaded and unpacked once into the cache."""
    root = DEB_CACHE / f"{package}_{version}".replace(":", "%3a")
    if (root / ".done").exists():
        return root
    DEB_CACHE.mkdir(parents=True, exist_ok=True)
    before = set(DEB_CACHE.glob("*.deb"))
    got = subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=DEB_CACHE, capture_output=True, text=True,
                         check=False)
    debs = (sorted(set(DEB_CACHE.glob("*.deb")) - before)
            or sorted(DEB_CACHE.glob(f"{package}_{version.split(':')[-1]}_*.deb")))  # already downloaded once
    if got.returncode != 0 or not debs:
        raise DevsetError(f"cannot download {package}={version}: {(got.stderr or got.stdout).strip()[:300]} "
                          "(run `apt-get update`, or fix the version in the corpus tsv)")
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(root)], check=True)
    (root / ".done").write_text(debs[-1].name)
    return root


def source_path(entry: CorpusFile) -> Path:
    """The file on this machine (downloading its package for deb: rows); DevsetError when it cannot be had."""
    if entry.source == "usrdoc":
        path = _under_share(USRSHARE, entry.relative_path)
    elif entry.source == "shared":
        path = data_root() / entry.relative_path
    else:
        package, version = entry.source[4:].split("=", 1)
        path = _under_share(USRSHARE, entry.relative_path)
        if not (path.exists() and _installed_version(package) == version):
            path = _under_share(_deb_root(package, version), entry.relative_path)
    if not path.is_file():
        raise DevsetError(f"{entry.tsv}: {entry.relative_path} ({entry.source}) not found at {path}")
    return path


def build(out: Path, folder: Path = HERE) -> int:
    """Copy every corpus file to out/<docset>/<relative_path>; stop at the first file that cannot be had.
    Files in `out` that no tsv row lists any more are removed, so `out` must be empty or a folder `build` made."""
    files = load_corpus(folder)
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise DevsetError(f"{out} is not empty and was not made by `build`: choose an empty or new folder")
    sources = {rel: source_path(entry) for rel, entry in files.items()}  # all found before anything is written
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("made by benchmarks/trust/devset.py build\n")
    total = 0
    for rel, entry in files.items():
        dest = out / entry.built
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources[rel], dest)
        total += dest.stat().st_size
    wanted = {entry.built.as_posix() for entry in files.values()} | {MARKER}
    for stale in [p for p in out.rglob("*") if p.is_file() and p.relative_to(out).as_posix() not in wanted]:
        stale.unlink()  # a file dropped from the tsv must not stay in the knowledge base
    print(f"built {len(files)} files, {total / 2**20:.1f} MB, in {out}")
    return 0


# ---------------------------------------------------------------- text

def extracted_text(path: Path, cache: Path = TEXT_CACHE) -> str:
    """The text docqa's reader registry extracts from a file (cached by content and reader set)."""
    from docqa.ingest.readers.registry import read_file, readers_fingerprint

    data = path.read_bytes()
    key = hashlib.sha256(data + readers_fingerprint().encode()).hexdigest()[:32]
    cached = cache / f"{key}.txt"
    if cached.exists():
        return cached.read_text(encoding="utf-8")
    text = read_file(path, data).text
    cache.mkdir(parents=True, exist_ok=True)
    cached.write_text(text, encoding="utf-8")
    return text


# ---------------------------------------------------------------- questions

def load_questions(folder: Path = HERE) -> list[tuple[str, int, dict | None, str | None]]:
    """(file, line, question or None, JSON error or None) for every line of every questions_*.jsonl."""
    rows = []
    for path in sorted(folder.glob("questions_*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as exc:
                rows.append((path.name, n, None, f"not JSON: {exc}"))
                continue
            rows.append((path.name, n, q, None if isinstance(q, dict) else "not a JSON object"))
    return rows


def _known(rel: object, corpus: dict[str, CorpusFile]) -> bool:
    return isinstance(rel, str) and rel in corpus


def _schema_errors(q: dict, corpus: dict[str, CorpusFile], valid: bool = False, dev2: bool = False) -> list[str]:
    """What is wrong with the question's fields; `valid`: it comes from VALID_FILE, whose ids are <docset>-v<nnn>;
    `dev2`: from DEV2_FILE, whose ids are <docset>-d<nnn>."""
    errs = []
    missing, unknown = REQUIRED - q.keys(), q.keys() - REQUIRED - OPTIONAL
    if missing:
        errs.append(f"missing fields {sorted(missing)}")
    if unknown:
        errs.append(f"unknown fields {sorted(unknown)}")
    if missing:
        return errs
    docsets = {e.docset for e in corpus.values()}
    if not isinstance(q["docset"], str) or q["docset"] not in docsets:
        errs.append(f"docset {q['docset']!r} has no file in any corpus_*.tsv")
    if valid and not re.fullmatch(re.escape(str(q["docset"])) + r"-v\d{3,}", str(q["id"])):
        errs.append(f"id must be <docset>-v<nnn> in {VALID_FILE}")
    if dev2 and not re.fullmatch(re.escape(str(q["docset"])) + r"-d\d{3,}", str(q["id"])):
        errs.append(f"id must be <docset>-d<nnn> in {DEV2_FILE}")
    if not valid and not dev2 and not re.fullmatch(re.escape(str(q["docset"])) + r"-\d{3,}", str(q["id"])):
        errs.append(f"id must be <docset>-<nnn> (<docset>-v<nnn> only in {VALID_FILE}, <docset>-d<nnn> only in {DEV2_FILE})")
    if not isinstance(q["lang"], str) or q["lang"] not in LANGS:
        errs.append(f"lang must be one of {sorted(LANGS)}")
    if not isinstance(q["kind"], str) or q["kind"] not in KINDS:
        errs.append(f"kind must be one of {sorted(KINDS)}")
    if not isinstance(q["question"], str) or len(q["question"].strip()) < 5:
        errs.append("question must be a non-trivial string")
    if not isinstance(q["answerable"], bool):
        errs.append("answerable must be true or false")
    answers = q["answers"]
    if not (isinstance(answers, list) and all(isinstance(g, list) and g and all(isinstance(s, str) and s.strip()
                                                                                   for s in g) for g in answers)):
        errs.append("answers must be a list of non-empty lists of non-empty strings")
    evidence = q["evidence"]
    if not (isinstance(evidence, list) and all(isinstance(e, dict) and set(e) == {"file", "quote"}
                                               and isinstance(e["file"], str) and isinstance(e["quote"], str)
                                               and e["quote"].strip() for e in evidence)):
        errs.append("evidence must be a list of {file, quote} objects with non-empty quotes")
        evidence = []
    for e in evidence:
        if not _known(e["file"], corpus):
            errs.append(f"evidence file {e['file']!r} is not a relative_path of any corpus_*.tsv")
    if q["answerable"] is True:
        if not answers:
            errs.append("answerable question without answers")
        if not evidence:
            errs.append("answerable question without evidence")
        if "near" in q:
            errs.append("near is for unanswerable questions only")
        if q["kind"] == "multihop" and len({e["file"] for e in evidence}) < 2:
            errs.append("multihop needs evidence from at least 2 files")
    elif q["answerable"] is False:
        if answers:
            errs.append("unanswerable question must have answers []")
        if not _known(q.get("near"), corpus):
            errs.append("unanswerable question needs near: a relative_path of a corpus file that discusses the topic")
    return errs


def _evidence_errors(q: dict, corpus: dict[str, CorpusFile], texts: dict[str, str]) -> list[str]:
    errs = []
    quotes = []
    for e in q["evidence"]:
        text = texts.get(e["file"])
        if text is None:
            continue
        quote = collapse(e["quote"])
        quotes.append(quote)
        if quote not in text:
            errs.append(f"quote not found verbatim in {e['file']}: {quote[:90]!r}")
    if q["answerable"] is True and q["answers"] and quotes:
        union = squash(" ".join(quotes))
        found = [any(squash(s) in union for s in group) for group in q["answers"]]
        if q["kind"] == "crosslingual":
            if not any(found):
                errs.append("no answer form of any group occurs in the evidence quotes")
        else:
            errs += [f"answers group {group} has no string in the evidence quotes"
                     for group, ok in zip(q["answers"], found) if not ok]
    return errs


def check(folder: Path = HERE, cache: Path = TEXT_CACHE) -> int:
    """Validate every question file; print failures and return 1 when there are any."""
    from docqa.errors import IngestError

    corpus = load_corpus(folder)
    rows = load_questions(folder)
    failures: list[str] = []
    texts: dict[str, str] = {}
    needed = {e["file"] for _, _, q, err in rows if q and not err
              for e in (q.get("evidence") or []) if isinstance(e, dict) and _known(e.get("file"), corpus)}
    needed |= {q["near"] for _, _, q, err in rows if q and not err and _known(q.get("near"), corpus)}
    for rel in sorted(needed):
        try:
            texts[rel] = collapse(extracted_text(source_path(corpus[rel]), cache))
        except DevsetError as exc:
            failures.append(str(exc))
        except IngestError as exc:  # read_file turns any reader failure into one of these
            failures.append(f"{rel}: docqa could not read it: {type(exc).__name__}: {exc}")
    seen: dict[str, str] = {}
    count = 0
    for name, n, q, err in rows:
        where = f"{name}:{n}"
        if err:
            failures.append(f"{where}: {err}")
            continue
        count += 1
        qid = str(q.get("id"))
        where = f"{where} [{qid}]"
        if qid in seen:
            failures.append(f"{where}: duplicate id (first at {seen[qid]})")
        seen.setdefault(qid, where)
        errs = _schema_errors(q, corpus, valid=name == VALID_FILE, dev2=name == DEV2_FILE)
        if not errs:
            errs = _evidence_errors(q, corpus, texts)
        failures += [f"{where}: {e}" for e in errs]
    if failures:
        print(f"{len(failures)} failure(s) in {count} questions:")
        for f in failures:
            print("  " + f)
        return 1
    print(f"ok: {count} questions, {len(corpus)} corpus files, {len(texts)} files read")
    return 0


def stats() -> int:
    """Counts by split, docset, lang, kind and answerable, and the corpus size."""
    rows = [(name, q) for name, _, q, err in load_questions() if q and not err]
    questions = [q for _, q in rows]
    file_of = {id(q): name.removeprefix("questions_").removesuffix(".jsonl") for name, q in rows}
    corpus = load_corpus()
    if not questions:
        print("no questions")
        return 1
    for title, key in (("split", lambda q: split(str(q.get("id")))), ("docset", lambda q: q.get("docset")),
                       ("lang", lambda q: q.get("lang")), ("kind", lambda q: q.get("kind")),
                       ("answerable", lambda q: q.get("answerable")),
                       ("split x answerable", lambda q: f"{split(str(q.get('id')))}/{q.get('answerable')}"),
                       ("file", lambda q: file_of[id(q)])):
        counts = collections.Counter(str(key(q)) for q in questions)
        print(f"{title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    n = len(questions)
    zh = sum(q.get("lang") == "zh" for q in questions)
    unans = sum(q.get("answerable") is False for q in questions)
    print(f"total {n}; Chinese questions {zh} ({zh / n:.0%}); unanswerable {unans} ({unans / n:.0%})")
    for part in ("dev", "test", "valid"):
        qs = [q for q in questions if split(str(q.get("id"))) == part]
        if qs:
            pz, pu = sum(q.get("lang") == "zh" for q in qs), sum(q.get("answerable") is False for q in qs)
            print(f"  {part}: {len(qs)}; Chinese {pz} ({pz / len(qs):.0%}); unanswerable {pu} ({pu / len(qs):.0%})")
    by_docset = collections.Counter(e.docset for e in corpus.values())
    print("corpus files: " + ", ".join(f"{k} {v}" for k, v in sorted(by_docset.items())) + f"; total {len(corpus)}")
    return 0


def show_text(rel: str) -> int:
    corpus = load_corpus()
    if rel not in corpus:
        raise DevsetError(f"{rel!r} is not a relative_path of any corpus_*.tsv")
    sys.stdout.write(extracted_text(source_path(corpus[rel])))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="assemble the corpus tree")
    b.add_argument("--out", type=Path, default=CORPUS_OUT)
    sub.add_parser("check", help="validate the question files against the corpus")
    sub.add_parser("stats", help="counts by split, docset, lang, kind, answerable")
    t = sub.add_parser("text", help="print the text docqa extracts from a corpus file")
    t.add_argument("file", help="a relative_path from a corpus_*.tsv")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            return build(args.out)
        if args.command == "check":
            return check()
        if args.command == "stats":
            return stats()
        return show_text(args.file)
    except DevsetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
