"""Hostile and odd folder entries, and honest outcomes: real files in a temporary folder, a real
SQLite knowledge base, the real pipeline (no mocks of our code)."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import socket
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest

from ingest.fixtures import blank_png
from docqa.kb import KnowledgeBase
from docqa.settings import Settings


def open_kb(path: Path) -> KnowledgeBase:
    return KnowledgeBase(Settings(kb=str(path), embed={"provider": "none"}, search={"mode": "bm25"}))


@pytest.fixture
def kb(tmp_path):
    base = open_kb(tmp_path / "kb.db")
    yield base
    base.close()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def names(paths) -> list[str]:
    return sorted(os.path.basename(p) for p in paths)


def found(kb: KnowledgeBase, word: str) -> list[str]:
    return names(h.path for h in kb.search(word))


def test_loops_fifos_sockets_and_dangling_links_are_skipped_and_the_batch_goes_on(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "good.md", "# Good\n\nThe heron waits by the river.\n")
    (docs / "loop_a").symlink_to("loop_b")
    (docs / "loop_b").symlink_to("loop_a")
    (docs / "dangling.txt").symlink_to("no-such-target.txt")
    os.mkfifo(docs / "pipe")
    (docs / "sub").mkdir()
    (docs / "sub" / "deeper").symlink_to("..")  # a folder loop through a symlinked folder
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(docs / "sock"))
    try:
        report = kb.add([docs])
    finally:
        server.close()
    assert names(report.added) == ["good.md"] and not report.failed
    reasons = {os.path.basename(p): r for p, r in report.skipped}
    assert "symlink loop" in reasons["loop_a"] and "symlink loop" in reasons["loop_b"]
    assert "dangling" in reasons["dangling.txt"] and "FIFO" in reasons["pipe"]
    assert "symlink to a folder" in reasons["deeper"] and "a socket, not a regular file" == reasons["sock"]
    assert found(kb, "heron") == ["good.md"]
    again = kb.add([docs])  # recorded: nothing is read again, nothing is listed again
    assert (again.unchanged, again.skipped, len(again.still_skipped)) == ([str(docs / "good.md")], [], 6)


def test_a_fifo_or_a_dangling_link_given_by_name_says_what_it_is(kb, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to("nowhere")
    report = kb.add([tmp_path / "pipe", tmp_path / "dangling", tmp_path / "absent"])
    reasons = dict(report.skipped)
    assert "FIFO" in reasons[str(tmp_path / "pipe")] and "dangling" in reasons[str(tmp_path / "dangling")]
    assert [(os.path.basename(p), k) for p, k, _ in report.failed] == [("absent", "missing")]


def test_symlinks_out_of_the_folder_never_show_their_target(kb, tmp_path):
    secret = write(tmp_path / "server-secret-dir" / "passwords.txt", "hunter2\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "innocent.txt").symlink_to(secret)
    (docs / "folder").symlink_to(secret.parent)
    report = kb.add([docs])
    text = repr(report.to_dict())
    assert "server-secret-dir" not in text and "passwords" not in text
    assert {os.path.basename(p) for p, _ in report.skipped} == {"innocent.txt", "folder"}
    assert all("outside the folder" in r for _, r in report.skipped)


def test_a_file_name_that_is_not_utf8_is_indexed_under_a_safe_name(kb, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    raw = os.path.join(os.fsencode(docs), b"caf\xe9-notes.txt")  # Latin-1 bytes: not valid UTF-8
    with open(raw, "wb") as fh:
        fh.write(b"the pelican migrates in autumn\n")
    write(docs / "plain.txt", "nothing special\n")
    report = kb.add([docs])
    safe = str(docs / "caf\\xe9-notes.txt")
    assert sorted(report.added) == sorted([safe, str(docs / "plain.txt")]) and not report.failed
    assert found(kb, "pelican") == ["caf\\xe9-notes.txt"]
    assert kb.add([docs]).unchanged == sorted([safe, str(docs / "plain.txt")])
    os.remove(raw)
    assert kb.add([docs]).removed == [safe]  # the stored safe name maps back to the real bytes
    assert found(kb, "pelican") == []


def test_gone_and_unreadable_are_told_apart_by_errno(tmp_path):
    """path_state on real paths: ENOENT and ENOTDIR (a path under a regular file) prove a path is
    gone; ELOOP (a path through a symlink loop) does not, so its documents would be kept."""
    from docqa.ingest.scan import path_state, safe_path

    (tmp_path / "file").write_text("x")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(OSError) as caught:
        os.lstat(tmp_path / "file" / "child")
    assert caught.value.errno == errno.ENOTDIR
    assert path_state(str(tmp_path / "file" / "child"))[0] == "gone"
    assert path_state(str(tmp_path / "missing"))[0] == "gone"
    assert path_state(str(tmp_path / "a" / "child")) == ("unreadable", os.strerror(errno.ELOOP))
    assert path_state(str(tmp_path / "file")) == ("present", "")
    assert safe_path(os.fsdecode(b"/x/\xff.txt")) == "/x/\\xff.txt"


@contextlib.contextmanager
def as_unprivileged_user():
    """Run the block as a user that file permissions apply to.  As root, chmod 000 does not stop
    reads, so the effective uid is switched to `nobody` (65534) for the block and back after; as
    any other user nothing needs to change.  The kernel then really answers EACCES."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_a_briefly_unreadable_subfolder_keeps_its_documents():
    """The real pipeline, a real EACCES from the kernel (see as_unprivileged_user)."""
    base = Path(tempfile.mkdtemp(prefix="docqa-eacces-"))
    try:
        os.chmod(base, 0o755)
        docs = base / "docs"
        write(docs / "top.md", "# Top\n\nThe otter sleeps.\n")
        write(docs / "private" / "one.md", "# One\n\nThe kingfisher dives.\n")
        write(docs / "private" / "two.md", "# Two\n\nThe kingfisher eats.\n")
        if os.geteuid() == 0:
            for path in [base, *base.rglob("*")]:
                os.chown(path, 65534, 65534)
        with as_unprivileged_user(), open_kb(base / "kb.db") as kb:
            assert len(kb.add([docs]).added) == 3
            os.chmod(docs / "private", 0)
            try:
                report = kb.add([docs])
            finally:
                os.chmod(docs / "private", 0o755)
            assert report.removed == [] and report.failed == []
            assert report.unreadable == [(str(docs / "private"), os.strerror(errno.EACCES), 2)]
            assert found(kb, "kingfisher") == ["one.md", "two.md"]
            assert sorted(kb.add([docs]).unchanged) == sorted(str(p) for p in docs.rglob("*.md"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_an_added_folder_found_empty_keeps_its_documents(kb, tmp_path):
    """An unmounted drive leaves its mount point empty: that is not the user deleting every file."""
    mount = tmp_path / "mnt"
    write(mount / "a.md", "# A\n\nThe stork nests.\n")
    kb.add([mount])
    (mount / "a.md").unlink()
    report = kb.add([mount])
    assert report.removed == [] and report.unreadable[0][0] == str(mount) and report.unreadable[0][2] == 1
    assert found(kb, "stork") == ["a.md"]


def test_a_graphviz_dot_file_is_text_not_an_ole_container(kb, tmp_path):
    dot = write(tmp_path / "d" / "pipeline.dot", "digraph pipeline {\n  scan -> parse -> write;\n  label=\"flamingo\";\n}\n")
    report = kb.add([dot])
    assert report.added == [str(dot)] and not report.failed and not report.skipped
    assert found(kb, "flamingo") == ["pipeline.dot"]


def test_a_txt_that_turns_binary_after_8kb_is_refused(kb, tmp_path):
    path = tmp_path / "d" / "log.txt"
    path.parent.mkdir()
    rng = random.Random(15)
    path.write_bytes(b"plain words about albatrosses\n" * 400 + rng.randbytes(1024 * 1024))  # 12 KB then 1 MB
    report = kb.add([path])
    assert not report.added and not report.failed
    assert [(p, r) for p, r in report.skipped] == [(str(path), "unsupported file type (binary): log.txt (.txt)")]
    assert found(kb, "albatrosses") == []


def test_a_file_truncated_to_zero_bytes_leaves_the_index(kb, tmp_path):
    path = write(tmp_path / "d" / "notes.txt", "the puffin returns in spring\n")
    kb.add([path.parent])
    assert found(kb, "puffin") == ["notes.txt"]
    path.write_bytes(b"")
    report = kb.add([path.parent])
    assert report.skipped == [(str(path), "empty file")]
    assert found(kb, "puffin") == []
    assert {d.path: d.status for d in kb.documents.list()} == {str(path): "skipped"}


def test_a_later_exclude_prunes_what_it_now_excludes(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "keep.md", "# Keep\n\nThe swan glides.\n")
    (docs / "old.bin").write_bytes(b"\x00\x01\x02\x03" + bytes(range(200)))  # binary: skipped
    write(docs / "drafts" / "d.md", "# Draft\n\nThe swan drafts.\n")
    first = kb.add([docs])
    assert names(first.added) == ["d.md", "keep.md"] and names(p for p, _ in first.skipped) == ["old.bin"]
    report = kb.add([docs], exclude=["*.bin", "drafts/**"])
    assert names(report.removed) == ["d.md", "old.bin"] and (docs / "old.bin").exists()
    assert [d.path for d in kb.documents.list()] == [str(docs / "keep.md")]


def test_skipped_files_are_read_again_when_the_readers_change(kb, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "blob.bin").write_bytes(bytes(range(256)) * 4)
    kb.add([docs])
    assert kb.add([docs]).still_skipped == [str(docs / "blob.bin")]
    conn = sqlite3.connect(kb.store.path)  # as if written by another docqa version's readers
    with conn:
        conn.execute("UPDATE documents SET metadata = json_set(metadata, '$.readers', 'older')")
    conn.close()
    report = kb.add([docs])
    assert report.still_skipped == [str(docs / "blob.bin")] and report.unchanged == []  # read, judged the same
    assert kb.add([docs]).still_skipped == [str(docs / "blob.bin")]


def test_failures_count_once_then_as_still_failing(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "ok.md", "# Ok\n\nThe crane dances.\n")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    (docs / "pic.png").write_bytes(blank_png())  # a real picture with no text: skipped, with OCR or without
    first = kb.add([docs])
    assert [(os.path.basename(p), k) for p, k, _ in first.failed] == [("bad.pdf", "corrupt")]
    [(pic, reason)] = first.skipped
    assert os.path.basename(pic) == "pic.png" and reason in (
        "image: OCR found no text", "image with no text layer: needs OCR: pip install 'docqa[ocr]'",
        "image with no text layer: needs OCR (not enabled)")
    again = kb.add([docs])
    assert (again.failed, again.skipped, names(again.still_failing), names(again.still_skipped)) == ([], [], ["bad.pdf"], ["pic.png"])
    stats = kb.status.stats()
    assert (stats["documents"], stats["failed"], stats["skipped"]) == (1, 1, 1)
    assert stat.S_ISREG(os.stat(docs / "bad.pdf").st_mode)


def test_an_unreadable_path_given_by_name_says_so_not_no_such_file():
    """A real EACCES (see as_unprivileged_user): a file inside a folder the user may not enter."""
    base = Path(tempfile.mkdtemp(prefix="docqa-eacces-"))
    try:
        os.chmod(base, 0o755)
        write(base / "locked" / "inside.txt", "the ibis\n")
        if os.geteuid() == 0:
            for path in [base, *base.rglob("*")]:
                os.chown(path, 65534, 65534)
        with as_unprivileged_user(), open_kb(base / "kb.db") as kb:
            os.chmod(base / "locked", 0)
            try:
                report = kb.add([base / "locked" / "inside.txt"])
            finally:
                os.chmod(base / "locked", 0o755)
        assert report.failed == [] and report.added == []
        assert report.unreadable == [(str(base / "locked" / "inside.txt"), os.strerror(errno.EACCES), 0)]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_skipped_files_are_not_counted_as_failed_in_the_catalog(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nThe rail calls.\n")
    (docs / "pic.png").write_bytes(blank_png())
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    kb.add([docs])
    assert "> 1 document; 1 more failed to ingest" in kb.browse.llms_txt()
    assert kb.documents.collections() == {"default": 1}


def test_a_raised_limit_reads_again_what_the_old_one_refused(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "big.txt", "the godwit flies far\n" * 200)  # 4 KB
    settings = {"kb": str(tmp_path / "kb.db"), "embed": {"provider": "none"}, "search": {"mode": "bm25"}}
    with KnowledgeBase(Settings(**settings, ingest={"max_file_mb": 0.001})) as kb:
        assert [k for _, k, _ in kb.add([docs]).failed] == ["too-large"]
        assert kb.add([docs]).still_failing == [str(docs / "big.txt")]
    with KnowledgeBase(Settings(**settings, ingest={"max_file_mb": 1})) as kb:
        assert kb.add([docs]).updated == [str(docs / "big.txt")]  # its failure record is replaced
