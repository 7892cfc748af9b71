"""What the model reads of a passage: each distinct window once, and no filler runs when the model drops them."""

from __future__ import annotations

import numpy as np
import pytest

from docqa.embed.base import FILLER_RULES, without_filler
from docqa.embed.local import LocalEmbedder
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import HashEmbedder

FOOTER = "Copyright the authors, licensed under the GPL version two."
CONTENTS = ("Contents\n1 Introduction . . . . . . . . . . . . 3\n2 Installing the tools ........... 7\n"
            "Results\n=======\nThe totals follow...  as printed\n")


class Recording(HashEmbedder):
    """The hash embedder, reading windows of at most 70 characters and keeping every piece it is given."""

    window_chars = 70

    def __init__(self, drops_filler: bool = False):
        super().__init__(dimensions=64)
        self.drops_filler = drops_filler
        self.read: list[str] = []

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        self.read.extend(texts)
        return super()._embed(texts, kind)


def test_a_window_shared_by_texts_is_read_once_and_counts_in_each_of_them():
    texts = [f"Page {i} explains the topic number {i} here. {FOOTER}" for i in range(5)]
    model = Recording()
    together = model.embed_batch(texts)
    assert model.read.count(FOOTER) == 1 and len(model.read) == 6  # five first sentences and the footer once
    alone = np.stack([Recording().embed_batch([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-6)


def test_a_window_repeated_in_one_text_keeps_its_weight():
    first, other = "Alpha beta gamma delta epsilon words.", "Zeta eta theta iota kappa lambda."
    model = Recording()
    got = model.embed_batch([f"{first} {other} {first}"])[0]
    assert sorted(model.read) == sorted([first, other])  # read once
    a, b = model._embed([first], "passage")[0], model._embed([other], "passage")[0]
    expected = 2 * a + b
    assert np.allclose(got, expected / np.linalg.norm(expected), atol=1e-6)


@pytest.mark.parametrize(("text", "read"), [
    ("Introduction . . . . . . . . 3", "Introduction   3"),
    ("Usage ........ 7", "Usage   7"),
    ("Title\n=====\nbody", "Title\n \nbody"),
    ("a ~~~~ b ---- c ____ d", "a   b   c   d"),
    ("Wait... a -- b == c", "Wait... a -- b == c"),  # fewer than four of a mark: kept
    ("x = a ... b", "x = a ... b"),
    ("。。。。好", " 好"),
])
def test_runs_of_one_mark_are_left_out_of_the_model_input(text, read):
    assert without_filler(text) == read


def test_a_model_that_drops_filler_reads_fewer_characters_of_a_contents_page():
    lean, plain = Recording(drops_filler=True), Recording()
    vectors = lean.embed_batch([CONTENTS])
    plain.embed_batch([CONTENTS])
    read = " ".join(lean.read)
    assert ". . . ." not in read and "...." not in read and "====" not in read
    assert all(word in read for word in ("Introduction", "Installing", "3", "7", "follow..."))
    assert ". . . ." in " ".join(plain.read)
    assert sum(map(len, lean.read)) < sum(map(len, plain.read)) * 0.75 and len(lean.read) < len(plain.read)
    assert np.allclose(vectors[0], Recording().embed_batch([without_filler(CONTENTS)])[0], atol=1e-6)


def test_the_stored_text_keeps_what_the_model_did_not_read(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.md").write_text(f"# Manual\n\n{CONTENTS}", encoding="utf-8")
    model = Recording(drops_filler=True)
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db")), embedder=model, create=True) as kb:
        kb.add([docs])
        hit = kb.search("Installing the tools", mode="hybrid")[0]
    assert ". . . . . ." in hit.text and "=======" in hit.text
    assert model.read and not any(". . . ." in piece for piece in model.read)


def test_the_bundled_model_names_its_input_recipe_so_older_vectors_are_reindexed():
    key = LocalEmbedder().fingerprint.key  # nothing loads: the model is opened at first use
    assert key != "use-multilingual-v3@b8b05b01f086-w500/512/r1"  # vectors of the text with filler: refused, reindex
    assert key.endswith(f"-w500-f{FILLER_RULES}/512/r1")
    assert LocalEmbedder().drops_filler and not HashEmbedder().drops_filler


@pytest.mark.slow
def test_an_index_of_the_earlier_recipe_keeps_working_until_a_reindex_moves_it(tmp_path):
    """An index embedded before filler was left out (what docqa wrote until this recipe): searched with the
    recipe it was built with, no mismatch error; `reindex` re-embeds it with the current recipe."""
    earlier = "use-multilingual-v3@b8b05b01f086-w500/512/r1"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.md").write_text(f"# Manual\n\n{CONTENTS}\nThe daemon rereads its configuration on SIGHUP.\n",
                                    encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\nBread is baked from flour, water and yeast.\n", encoding="utf-8")
    built_with = LocalEmbedder()
    assert built_with.adopt(earlier) and built_with.fingerprint.key == earlier and not built_with.drops_filler
    settings = Settings(kb=str(tmp_path / "kb.db"))
    with KnowledgeBase(settings, embedder=built_with, create=True) as kb:
        kb.add([docs])
    with KnowledgeBase(settings) as kb:  # the configured (current) bundled model
        hits = kb.search("what happens on SIGHUP", mode="hybrid")
        assert hits and hits[0].path.endswith("manual.md")
        assert kb.models.embedder is not None and kb.models.embedder.fingerprint.key == earlier
        report = kb.documents.reindex()
        assert report.embedder == LocalEmbedder().fingerprint.key and report.embedded == report.chunks > 0
        hits = kb.search("what happens on SIGHUP", mode="hybrid")
        assert hits[0].path.endswith("manual.md")
        assert kb.models.embedder.fingerprint.key == report.embedder and kb.models.embedder.drops_filler


def test_only_the_earlier_recipe_of_the_same_model_is_adopted():
    model = LocalEmbedder()
    assert not model.adopt("use-multilingual-v3@b8b05b01f086-w800/512/r1")  # another window: reindex
    assert not model.adopt("e5-small@x/384/r1") and not HashEmbedder().adopt(model.fingerprint.key)
    assert model.fingerprint.key.endswith(f"-f{FILLER_RULES}/512/r1") and not model.adopted
