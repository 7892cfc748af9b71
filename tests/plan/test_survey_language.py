"""The survey's Han share is measured on the text the reader extracts, spread over each file and weighted by
its text (issue 33): a JSON Lines file whose head is keys and ids and whose body is Chinese; the same records
with the Chinese written as \\u escapes (indexed as those escapes: ASCII); a folder where a README and a licence
sit beside one large Chinese file. The index size estimated from it is checked against a real first add."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.plan import ingest_estimate
from docqa.plan.probe import spread, text_scripts
from docqa.plan.survey import survey
from docqa.settings import Settings
from docqa.text.language import HAN_RUN

HANZI = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"  # noqa: E501
WORDS = "index query chunk token cluster replica backup restore".split()


def _chinese(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(HANZI) for _ in range(n)) + "。"


def _records(rng: random.Random, count: int) -> list[dict]:
    """Records whose first lines are English metadata rows, the rest Chinese passages (as in a BEIR corpus whose
    head is an English README-like preamble)."""
    head = [{"_id": f"META_{i}", "title": "about", "text": " ".join(rng.choice(WORDS) for _ in range(60))} for i in range(40)]
    return head + [{"_id": f"DEV_{i}", "title": _chinese(rng, 6), "text": _chinese(rng, 300)} for i in range(count)]


def _write_jsonl(path: Path, records: list[dict], escaped: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=escaped) + "\n" for r in records), encoding="utf-8")


def _actual(folder: Path, tmp: Path) -> tuple[int, int, int]:
    """(index bytes, characters, Han characters) after a full-text-only first add of `folder`."""
    settings = Settings(kb=str(tmp / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings, create=True) as kb:
        kb.add([folder])
        texts = [kb.documents.text(r.document_id) for r in kb.documents.list()]
    size = sum(p.stat().st_size for p in tmp.glob("kb.db*"))
    return size, sum(len(t) for t in texts), sum(len(run) for t in texts for run in HAN_RUN.findall(t))


def _settings(tmp: Path) -> Settings:
    return Settings(kb=str(tmp / "unused.db"), embed={"provider": "none"}, llm={"provider": "none"})


def test_spread_takes_slices_from_the_whole_text():
    text = "a" * 50_000 + "中" * 50_000
    sampled = spread(text, chars=1000, windows=10)
    assert 900 <= len(sampled) <= 1100
    assert sampled.count("中") > 300 and sampled.count("a") > 300  # the head alone is all Latin
    assert spread("short", chars=1000) == "short"


def test_scripts_are_scaled_to_the_whole_text():
    text = "index " * 5_000 + "中文检索" * 20_000  # 30,000 Latin characters, then 80,000 Han
    counts = text_scripts(text)
    assert abs(counts["han"] - 80_000) < 8_000, counts
    assert abs(counts["latin"] - 25_000) < 5_000, counts


def _han(path: Path) -> int:
    return sum(len(run) for run in HAN_RUN.findall(path.read_text(encoding="utf-8")))


def test_the_survey_measures_chinese_json_lines_past_an_english_head(tmp_path: Path):
    folder = tmp_path / "raw"
    _write_jsonl(folder / "corpus.jsonl", _records(random.Random(7), 100), escaped=False)
    found = survey(folder)
    han = _han(folder / "corpus.jsonl")
    measured = sum(m["han_chars"] for m in [*found.heavy, *found.sample.values()])
    assert abs(measured - han) <= 0.1 * han, (measured, han)
    assert found.file_languages == {"zh": 1} and found.scripts["han"] > found.scripts["latin"]


def test_the_survey_reads_escaped_chinese_as_the_ascii_the_reader_keeps(tmp_path: Path):
    folder = tmp_path / "escaped"
    _write_jsonl(folder / "corpus.jsonl", _records(random.Random(7), 100), escaped=True)
    found = survey(folder)
    assert "\\u" in (folder / "corpus.jsonl").read_text(encoding="utf-8") and _han(folder / "corpus.jsonl") == 0
    assert found.scripts.get("han", 0) == 0 and found.file_languages == {"en": 1}
    assert sum(m["han_chars"] for m in [*found.heavy, *found.sample.values()]) == 0


@pytest.mark.slow
def test_chinese_json_lines_with_an_english_head(tmp_path: Path):
    rng = random.Random(7)
    folder = tmp_path / "raw"
    _write_jsonl(folder / "corpus.jsonl", _records(rng, 400), escaped=False)
    size, chars, han = _actual(folder, tmp_path / "kb")
    estimate = ingest_estimate(folder, _settings(tmp_path))
    assert abs(estimate.text_chars - chars) <= 0.05 * chars
    assert abs(estimate.index_bytes - size) <= 0.15 * size, (estimate.index_bytes, size)


@pytest.mark.slow
def test_json_with_escaped_chinese_is_estimated_as_the_escapes_it_indexes(tmp_path: Path):
    rng = random.Random(7)
    folder = tmp_path / "escaped"
    _write_jsonl(folder / "corpus.jsonl", _records(rng, 400), escaped=True)
    size, _, han = _actual(folder, tmp_path / "kb")
    assert han == 0  # the reader keeps the JSON source: the index holds \\uXXXX, not Chinese
    estimate = ingest_estimate(folder, _settings(tmp_path))
    assert abs(estimate.index_bytes - size) <= 0.15 * size, (estimate.index_bytes, size)


@pytest.mark.slow
def test_a_large_chinese_text_outweighs_small_english_files(tmp_path: Path):
    rng = random.Random(11)
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "README.md").write_text("# About\n\n" + " ".join(rng.choice(WORDS) for _ in range(600)), encoding="utf-8")
    (folder / "LICENSE.txt").write_text(" ".join(rng.choice(WORDS) for _ in range(2000)), encoding="utf-8")
    (folder / "book.txt").write_text("\n\n".join(_chinese(rng, 400) for _ in range(300)), encoding="utf-8")
    found = survey(folder)
    size, _, _ = _actual(folder, tmp_path / "kb")
    letters = sum(found.scripts.values())
    assert found.scripts["han"] / letters > 0.8, found.scripts  # each file weighed by its text, not one window each
    estimate = ingest_estimate(folder, _settings(tmp_path))
    assert abs(estimate.index_bytes - size) <= 0.15 * size, (estimate.index_bytes, size)


def test_a_few_chinese_files_among_long_english_ones_keep_the_multilingual_embedder(tmp_path: Path):
    """Weighed by text, the Chinese letters are a small share; the files that are Chinese still ask for the model
    that finds answers across languages."""
    from docqa.plan.chat import Found
    from docqa.plan.propose import Environment, propose

    rng = random.Random(3)
    folder = tmp_path / "mixed"
    folder.mkdir()
    for n in range(12):
        (folder / f"guide{n:02}.md").write_text("# Guide\n\n" + " ".join(rng.choice(WORDS) for _ in range(4000)), encoding="utf-8")
    (folder / "zh.txt").write_text(_chinese(rng, 300), encoding="utf-8")
    found = survey(folder)
    assert found.scripts["han"] / sum(found.scripts.values()) < 0.05 and found.file_languages.get("zh") == 1
    proposal = propose(found, Environment(ocr_installed=False, e5_installed=True, use_installed=True,
                                          chat=Found(None, "extractive", "no chat model")))
    assert proposal.values["embed.model"] == "use-multilingual-v3", proposal.reasons["embed.model"]
    assert "1 of 13 files not English" in proposal.reasons["embed.model"]
