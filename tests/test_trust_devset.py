"""benchmarks/trust/devset.py: the split is stable, `check` catches what it promises to catch (quotes that are not
verbatim in the text docqa extracts, answers absent from the quotes, schema slips) and `build` lays the corpus out
as documented.  Real files in a temporary folder, read by docqa's own readers."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_devset():
    spec = importlib.util.spec_from_file_location("trust_devset", ROOT / "benchmarks" / "trust" / "devset.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


devset = _load_devset()

DOC = "# Ports\n\nThe first cluster runs on port 5432,\nthe next one on   5433.\n\nNothing about timeouts here.\n"


def _question(qid: str, **fields) -> dict:
    q = {"id": qid, "docset": "demo", "lang": "en", "kind": "number", "question": "Which port does the first cluster use?",
         "answerable": True, "answers": [["5432"]],
         "evidence": [{"file": "docs/ports.md", "quote": "The first cluster runs on port 5432, the next one on 5433."}]}
    q.update(fields)
    return q


@pytest.fixture
def devset_dir(tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    (data / "docs" / "ports.md").write_text(DOC, encoding="utf-8")
    monkeypatch.setenv("DOCQA_DATA", str(data))
    folder = tmp_path / "trust"
    folder.mkdir()
    (folder / "corpus_demo.tsv").write_text("# docset\tsource\tpath\ndemo\tshared\tdocs/ports.md\n", encoding="utf-8")
    return folder


def _write(folder: Path, questions: list[dict]) -> None:
    lines = [json.dumps(q, ensure_ascii=False) for q in questions]
    (folder / "questions_demo.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_split_is_stable_and_about_even():
    ids = [f"git-relnotes-{n:03d}" for n in range(400)]
    first = [devset.split(i) for i in ids]
    assert first == [devset.split(i) for i in ids]
    assert set(first) == {"dev", "test"}
    assert 150 < first.count("dev") < 250


def test_check_passes_verbatim_quotes_after_whitespace_collapse(devset_dir, tmp_path, capsys):
    unanswerable = _question("demo-002", question="What is the connection timeout?", answerable=False, answers=[],
                             evidence=[], near="docs/ports.md")
    _write(devset_dir, [_question("demo-001"), unanswerable])
    assert devset.check(devset_dir, tmp_path / "cache") == 0
    assert "ok: 2 questions" in capsys.readouterr().out


def test_check_reports_each_broken_question(devset_dir, tmp_path, capsys):
    _write(devset_dir, [
        _question("demo-001", evidence=[{"file": "docs/ports.md", "quote": "The first cluster uses port 5432."}]),
        _question("demo-002", answers=[["5432"], ["6543"]]),
        _question("demo-003", answerable=False),
        _question("demo-004", kind="multihop"),
        _question("demo-004"),
        _question("other-005", lang="fr", evidence=[{"file": "docs/missing.md", "quote": "x"}]),
    ])
    assert devset.check(devset_dir, tmp_path / "cache") == 1
    out = capsys.readouterr().out
    assert "[demo-001]: quote not found verbatim in docs/ports.md" in out
    assert "[demo-002]: answers group ['6543'] has no string in the evidence quotes" in out
    assert "[demo-003]: unanswerable question must have answers []" in out
    assert "[demo-003]: unanswerable question needs near" in out
    assert "[demo-004]: multihop needs evidence from at least 2 files" in out
    assert "[demo-004]: duplicate id" in out
    assert "[other-005]: id must be <docset>-<nnn>" in out
    assert "[other-005]: lang must be one of" in out
    assert "'docs/missing.md' is not a relative_path" in out


def test_crosslingual_needs_one_form_found(devset_dir, tmp_path):
    zh = _question("demo-001", lang="zh", kind="crosslingual", question="第一个集群用哪个端口？",
                   answers=[["5432", "五四三二"], ["端口"]])
    _write(devset_dir, [zh])
    assert devset.check(devset_dir, tmp_path / "cache") == 0
    _write(devset_dir, [dict(zh, answers=[["五四三二"]])])
    assert devset.check(devset_dir, tmp_path / "cache") == 1


def test_build_lays_out_docset_and_relative_path_and_prunes_only_its_own_folder(devset_dir, tmp_path):
    out = tmp_path / "corpus"
    assert devset.build(out, devset_dir) == 0
    assert (out / "demo" / "docs" / "ports.md").read_text(encoding="utf-8") == DOC
    (out / "demo" / "stale.txt").write_text("dropped from the tsv")
    devset.build(out, devset_dir)
    assert not (out / "demo" / "stale.txt").exists()
    assert devset.corpus_path("docs/ports.md", devset.load_corpus(devset_dir)) == "demo/docs/ports.md"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("not ours")
    with pytest.raises(devset.DevsetError, match="not made by `build`"):
        devset.build(foreign, devset_dir)
    assert (foreign / "keep.txt").exists()


def test_build_names_the_missing_file(devset_dir, tmp_path):
    with (devset_dir / "corpus_demo.tsv").open("a", encoding="utf-8") as fh:
        fh.write("demo\tshared\tdocs/gone.md\n")
    with pytest.raises(devset.DevsetError, match="docs/gone.md"):
        devset.build(tmp_path / "corpus", devset_dir)
    assert not (tmp_path / "corpus").exists()


@pytest.mark.skipif(not Path("/usr/share/doc/git/RelNotes/2.39.5.txt").exists(),
                    reason="the English corpus is read from this machine's /usr/share/doc (Debian packages)")
def test_the_committed_english_half_passes_check(tmp_path):
    folder = tmp_path / "trust"
    folder.mkdir()
    for name in ("corpus_en.tsv", "questions_en_docs.jsonl"):  # the Chinese half may need packages downloaded
        (folder / name).write_bytes((ROOT / "benchmarks" / "trust" / name).read_bytes())
    assert devset.check(folder, tmp_path / "cache") == 0
