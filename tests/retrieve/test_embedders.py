"""The HTTP embedders against a scripted server on loopback; fingerprints; reindex."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from docqa.embed.remote import OllamaEmbedder, OpenAIEmbedder
from docqa.errors import EmbedderMismatchError, EmbedError, MissingExtraError
from docqa.embed.base import Embedder
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .embed_server import DIMS, EmbedServer, fake_vector


@pytest.fixture
def server():
    with EmbedServer() as s:
        yield s


def test_ollama_embedder(server):
    e = OllamaEmbedder("nomic-embed-text", server.url)
    vectors = e.embed_batch(["alpha beta", "gamma"], "passage")
    assert vectors.shape == (2, DIMS) and e.dimensions == DIMS
    assert np.allclose(vectors[0], fake_vector("alpha beta"), atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert server.requests[-1]["path"] == "/api/embed"
    assert server.requests[-1]["body"] == {"model": "nomic-embed-text", "input": ["alpha beta", "gamma"]}
    assert e.fingerprint.name == "ollama:nomic-embed-text" and e.fingerprint.dimensions == DIMS


def test_openai_embedder_orders_by_index_and_sends_the_key(server):
    e = OpenAIEmbedder("text-embedding-3-small", server.url + "/v1", api_key="sk-test")
    texts = [f"text number {i}" for i in range(70)]  # three requests of at most 32
    vectors = e.embed_batch(texts)
    assert np.allclose(vectors[69], fake_vector("text number 69"), atol=1e-6)  # the server answers in reverse order
    assert len(server.requests) == 3 and all(r["auth"] == "Bearer sk-test" for r in server.requests)


@pytest.mark.slow
def test_retries_on_5xx_and_429_then_fails_clearly(server):
    e = OpenAIEmbedder("m", server.url + "/v1")
    server.fail_next = [503, 429]
    assert e.embed_batch(["ok"]).shape == (1, DIMS)  # two failures, then an answer
    server.fail_next = [500] * 10
    with pytest.raises(EmbedError, match="500"):
        e.embed_batch(["never"])
    server.fail_next = [400]
    with pytest.raises(EmbedError, match="refused the request: 400"):
        e.embed_batch(["bad"])


@pytest.mark.slow
def test_unreachable_server_names_the_url_and_what_to_do():
    e = OllamaEmbedder("bge-m3", "http://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(EmbedError, match=r"127\.0\.0\.1:9/api/embed.*ollama pull bge-m3"):
        e.embed_batch(["x"])


def test_long_passages_are_embedded_as_averaged_windows(server):
    e = OpenAIEmbedder("m", server.url + "/v1", window_chars=40)
    text = "First sentence about apples. Second sentence about pears. Third one on plums."
    windows = e.windows(text)
    assert len(windows) > 1 and all(len(w) <= 40 for w in windows) and "".join(windows).replace(" ", "") == text.replace(" ", "")
    expected = np.sum([fake_vector(w) for w in windows], axis=0)
    assert np.allclose(e.embed_batch([text])[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert np.allclose(e.embed_batch([text], "query")[0], fake_vector(text), atol=1e-6)  # queries are not split


def _settings(tmp_path, url: str | None, model: str = "model-a") -> Settings:
    embed = {"provider": "openai", "model": model, "base_url": url + "/v1"} if url else {"provider": "none"}
    return Settings(kb=str(tmp_path / "kb.db"), embed=embed)


def _corpus(root: Path, files: int = 6, sections: int = 3) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        body = "\n\n".join(f"## Part {s}\n\nFile {i} part {s} talks about topic{i}x{s} and more." for s in range(sections))
        (root / f"f{i}.md").write_text(f"# File {i}\n\n{body}\n", encoding="utf-8")
    return root


def _sent(server) -> list[str]:
    """Texts the server embedded, without the one-word probe that learns the vector size."""
    return [t for r in server.requests for t in r["body"]["input"] if t != "dimension probe"]


@pytest.mark.slow
def test_unchanged_text_is_never_embedded_twice(tmp_path, server):
    root = _corpus(tmp_path / "docs", files=2)
    with KnowledgeBase(_settings(tmp_path, server.url)) as kb:
        kb.add([root])
        first = len(_sent(server))
        assert first == kb.status.stats()["chunks"]
        server.requests.clear()
        text = (root / "f0.md").read_text(encoding="utf-8").replace("part 1 talks", "part 1 now talks")
        (root / "f0.md").write_text(text, encoding="utf-8")
        report = kb.add([root])
        assert [Path(p).name for p in report.updated] == ["f0.md"]
        sent = _sent(server)
        assert len(sent) == 1 and "part 1 now talks" in sent[0]  # only the changed chunk
        stats = kb.status.stats()
        assert stats["vectors"] == stats["chunks"]  # the replaced chunk's vector is gone


@pytest.mark.slow
def test_another_model_is_refused_until_reindex(tmp_path, server):
    root = _corpus(tmp_path / "docs")
    with KnowledgeBase(_settings(tmp_path, server.url, "model-a")) as kb:
        kb.add([root])
    with KnowledgeBase(_settings(tmp_path, server.url, "model-b")) as kb:
        with pytest.raises(EmbedderMismatchError, match=r"openai:model-a.*openai:model-b.*docqa reindex"):
            kb.search("topic1x1")
        with pytest.raises(EmbedderMismatchError, match="docqa reindex"):
            kb.add([root])
        assert kb.search("topic1x1", mode="bm25")  # full-text search still works
        report = kb.documents.reindex()
        assert report.embedded == kb.status.stats()["chunks"] and report.embedder.startswith("openai:model-b@")
        assert Path(kb.search("topic1x1")[0].path).name == "f1.md"
        assert kb.status.stats()["embedder"]["name"] == "openai:model-b"
        assert kb.status.stats()["vectors"] == kb.status.stats()["chunks"]  # model-a's vectors are dropped
    with KnowledgeBase(_settings(tmp_path, None)) as kb:  # provider none: reading works, writing is refused
        assert kb.search("topic1x1").mode == "bm25"
        with pytest.raises(EmbedderMismatchError, match="provider is 'none'"):
            kb.add([root])


def _vectors(db: Path) -> dict[str, bytes]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT text_hash, vector FROM embeddings"))
    finally:
        conn.close()


@pytest.mark.slow
def test_reindex_resumes_after_a_kill(tmp_path):
    root = _corpus(tmp_path / "docs", files=100, sections=6)  # 600 chunks: three reindex batches
    with KnowledgeBase(_settings(tmp_path, None)) as kb:  # built without vectors
        kb.add([root])
        chunks = kb.status.stats()["chunks"]
    reference = tmp_path / "reference"
    reference.mkdir()
    shutil.copy(tmp_path / "kb.db", reference / "kb.db")
    with EmbedServer(delay=0.05) as server:
        env = {**os.environ, "DOCQA_EMBED__PROVIDER": "openai", "DOCQA_EMBED__MODEL": "model-a",
               "DOCQA_EMBED__BASE_URL": server.url + "/v1"}
        proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), "reindex"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while len(server.requests) < 12 and time.monotonic() < deadline:  # past the first committed batch
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        partial = len(_vectors(tmp_path / "kb.db"))
        assert 0 < partial < chunks, partial
        server.requests.clear()
        with KnowledgeBase(_settings(tmp_path, server.url)) as kb:
            report = kb.documents.reindex()
            assert report.reused == partial and report.embedded == chunks - partial
            assert len(_sent(server)) == chunks - partial  # nothing embedded twice
        with KnowledgeBase(_settings(reference, server.url)) as kb:  # the same reindex, never interrupted
            kb.documents.reindex()
    resumed, straight = _vectors(tmp_path / "kb.db"), _vectors(reference / "kb.db")
    assert len(resumed) == chunks and resumed == straight


class _HashEmbedder(Embedder):
    """Deterministic per text (no padding effects): a sorted run must give the same rows."""

    name, dimensions, batch_size, window_chars = "hash", 8, 3, 40

    def __init__(self, pads: bool):
        self.pads_batches, self.batches = pads, []

    def _embed(self, texts, kind):
        self.batches.append(list(texts))
        return np.array([[(hash(t) >> (4 * k)) % 97 + 1 for k in range(8)] for t in texts], dtype=np.float32)


def test_padded_batches_are_sorted_by_length_and_rows_stay_in_order():
    texts = ["short", "a much longer passage. " * 6, "mid sized text here", "x", "another long one. " * 4]
    plain, padded = _HashEmbedder(False), _HashEmbedder(True)
    expected, got = plain.embed_batch(texts), padded.embed_batch(texts)
    assert np.allclose(expected, got, atol=1e-6)  # each text's windows still average into its own row
    lengths = [len(p) for batch in padded.batches for p in batch]
    assert lengths == sorted(lengths) and len(padded.batches) > 1
    assert [p for b in plain.batches for p in b] != [p for b in padded.batches for p in b]


class _SlowHashEmbedder(_HashEmbedder):
    """The hash embedder with batches that finish out of order when several run at once."""

    def __init__(self, callers: int):
        super().__init__(True)
        self.callers, self.threads = callers, set()

    def _embed(self, texts, kind):
        import threading
        import time

        self.threads.add(threading.get_ident())
        time.sleep(0.02 if len(self.batches) % 2 == 0 else 0.001)  # the even batches finish last
        return super()._embed(texts, kind)


def test_batches_run_at_once_still_give_each_text_its_own_row():
    texts = [f"passage {i}. " * (i % 9 + 1) for i in range(30)]
    one, several = _SlowHashEmbedder(1), _SlowHashEmbedder(3)
    done = []
    expected = one.embed_batch(texts)
    got = several.embed_batch(texts, progress=lambda n, total: done.append(n))
    assert np.array_equal(expected, got)
    assert len(one.threads) == 1 and len(several.threads) > 1  # they really ran on several threads
    assert done == sorted(done) and done[-1] == len(texts)


def test_a_failing_batch_among_several_running_raises_its_error():
    class Failing(_SlowHashEmbedder):
        def _embed(self, texts, kind):
            if any("boom" in t for t in texts):
                raise RuntimeError("the model failed on this batch")
            return super()._embed(texts, kind)

    failing = Failing(2)
    with pytest.raises(RuntimeError, match="failed on this batch"):
        failing.embed_batch(["boom"] + [f"text {i}" for i in range(60)])
    assert len(failing.batches) < 60 // 3  # the batches not started were cancelled, not all run first


def test_a_model_that_cannot_load_is_quiet_when_warmed_and_fails_at_first_use():
    class Unloadable(_HashEmbedder):
        runs_here = True

        def _load(self):
            raise MissingExtraError("the test model", "pip install the-test-model")

        def _embed(self, texts, kind):
            self._load()

    embedder = Unloadable(False)
    embedder.warm()  # on ingest's loading thread: nothing to report there
    with pytest.raises(MissingExtraError, match="pip install the-test-model"):
        embedder.embed_query("rotate keys")
