"""Archives and compressed files on real files: members as documents at `<archive>!/<member>`,
updated and removed with their archive, bounded decompression, names that are only names."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import sqlite3
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from ingest.fixtures import blank_png
from docqa.errors import CorruptFileError, FileTooLargeError, UnsupportedFormatError
from docqa.ingest.readers import read_file, sniff_type
from docqa.ingest.readers import bounds
from docqa.ingest.readers.archive import Archive, archive_of, safe_name
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

GUIDE = "# Install\n\nRun the flamingo installer twice, then reboot.\n"
FAQ = "# FAQ\n\nThe pangolin answers every question about licences.\n"


@pytest.fixture
def kb(tmp_path):
    base = KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), search={"mode": "bm25"}, embed={"provider": "none"}))
    yield base
    base.close()


def make_zip(path: Path, members: dict[str, bytes | str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def make_tar(path: Path, members: dict[str, bytes | str], mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            data = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def rewrite(path: Path, build, *args) -> None:
    """Rebuild an archive and give it a new mtime (a second apart from the old one)."""
    build(path, *args)
    later = time.time_ns() + 2 * 10**9
    os.utime(path, ns=(later, later))


def hit_paths(kb: KnowledgeBase, query: str) -> list[str]:
    return [h.path for h in kb.search(query)]


# -- compressed single files ---------------------------------------------------------------------

def _zstd(data: bytes) -> bytes | None:
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdCompressor().compress(data)


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress),
                                              (".zst", _zstd)])
def test_each_compression_is_read_as_the_file_it_holds(tmp_path, suffix, compress):
    path = tmp_path / f"guide.md{suffix}"
    packed = compress(GUIDE.encode())
    if packed is None:  # zstandard missing: a skip that names the install command
        path.write_bytes(bytes.fromhex("28b52ffd") + b"\x00" * 8)
        with pytest.raises(UnsupportedFormatError, match="pip install 'zstandard"):
            read_file(path)
        return
    path.write_bytes(packed)
    doc = read_file(path)
    assert doc.path == str(path) and doc.type == "markdown" and "flamingo installer" in doc.text
    assert doc.metadata["compression"] in ("gzip", "bzip2", "xz", "zstd")
    assert sniff_type(path, packed[:8192]) == "compressed"


def test_compressed_files_in_a_folder_are_indexed_under_their_real_path(kb, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt.gz").write_bytes(gzip.compress(b"The walrus hums a quiet tune in the harbour.\n"))
    (docs / "changelog.bz2").write_bytes(bz2.compress(b"Version 2 fixes the xenops crash.\n"))
    (docs / "broken.txt.gz").write_bytes(gzip.compress(b"The okapi sleeps.\n")[:-12])  # truncated stream
    report = kb.add([docs])
    assert sorted(Path(p).name for p in report.added) == ["changelog.bz2", "notes.txt.gz"]
    assert hit_paths(kb, "walrus") == [str(docs / "notes.txt.gz")]
    assert hit_paths(kb, "xenops") == [str(docs / "changelog.bz2")]
    [(path, kind, reason)] = report.failed
    assert path.endswith("broken.txt.gz") and kind == "corrupt" and "gzip" in reason


@pytest.mark.slow
def test_a_compressed_bomb_is_refused_quickly(tmp_path):
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(gzip.compress(b"a" * (300 * 1024 * 1024), compresslevel=9))  # ~300 KB -> 300 MB
    started = time.perf_counter()
    with pytest.raises(FileTooLargeError, match="decompression bomb"):
        read_file(bomb)
    assert time.perf_counter() - started < 5
    small = tmp_path / "words.txt.gz"
    small.write_bytes(gzip.compress(b"word " * 400_000))  # 2 MB of text, under the ratio limit
    assert "word" in read_file(small).text
    with bounds.limit(1024 * 1024), pytest.raises(FileTooLargeError, match="ingest.max_file_mb"):
        read_file(small)  # the file size limit holds for what a compressed file holds


# -- archives ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, build, mode", [
    ("manuals.zip", make_zip, None), ("manuals.tar", make_tar, "w"), ("manuals.tar.gz", make_tar, "w:gz"),
    ("manuals.tgz", make_tar, "w:gz"), ("manuals.tar.bz2", make_tar, "w:bz2"), ("manuals.tar.xz", make_tar, "w:xz"),
])
def test_members_are_documents_with_bang_paths(kb, tmp_path, name, build, mode):
    archive = tmp_path / "docs" / name
    members = {"install/guide.md": GUIDE, "faq.md": FAQ}
    build(archive, members, *([mode] if mode else []))
    report = kb.add([tmp_path / "docs"])
    guide, faq = f"{archive}!/install/guide.md", f"{archive}!/faq.md"
    assert set(report.added) == {guide, faq, str(archive)} and not report.failed
    assert hit_paths(kb, "flamingo")[0] == guide
    assert hit_paths(kb, "pangolin")[0] == faq
    records = {r.path: r for r in kb.documents.list()}
    assert records[guide].type == "markdown" and records[guide].document_id != records[faq].document_id
    assert records[str(archive)].type == "archive"  # the archive's own document lists its members
    assert "install/guide.md" in kb.documents.text(records[str(archive)].document_id)


def test_fetch_doc_and_list_docs_show_the_member_path(kb, tmp_path):
    archive = make_zip(tmp_path / "docs" / "manuals.zip", {"install/guide.md": GUIDE})
    kb.add([tmp_path / "docs"])
    member = f"{archive}!/install/guide.md"
    for ref in (member, "manuals.zip!/install/guide.md", "install/guide.md"):
        doc = kb.browse.fetch_doc(ref)
        assert doc.path == member and "flamingo installer" in doc.text
    assert any(line.startswith("- [manuals.zip! / install / Install]") for line in kb.browse.list_docs().lines)
    [hit] = [h for h in kb.search("flamingo") if h.path == member]
    assert kb.documents.text(hit.document_id)[hit.char_start:hit.char_end] == hit.text


def test_archive_changes_are_followed(kb, tmp_path):
    docs = tmp_path / "docs"
    archive = make_zip(docs / "manuals.zip", {"guide.md": GUIDE, "faq.md": FAQ, "old.txt": "The dodo was here.\n"})
    kb.add([docs])

    again = kb.add([docs])  # unchanged archive: skipped by size and mtime, nothing read
    assert again.unchanged == [str(archive)] and not again.added and not again.updated and again.chunks == 0
    assert not again.removed and len(kb.documents.list()) == 4

    rewrite(archive, make_zip, {"guide.md": GUIDE.replace("flamingo", "heron"), "faq.md": FAQ,
                                "new.md": "# New\n\nThe quokka smiles.\n"})
    changed = kb.add([docs])
    assert set(changed.updated) == {f"{archive}!/guide.md", str(archive)}
    assert changed.added == [f"{archive}!/new.md"] and changed.removed == [f"{archive}!/old.txt"]
    assert f"{archive}!/faq.md" in changed.unchanged  # same bytes: touched, not re-parsed
    assert hit_paths(kb, "heron")[0] == f"{archive}!/guide.md" and hit_paths(kb, "flamingo") == []
    assert hit_paths(kb, "quokka")[0] == f"{archive}!/new.md" and hit_paths(kb, "dodo") == []
    assert kb.store.check()["fts_orphans"] == 0

    rewrite(archive, make_zip, {"guide.md": GUIDE, "faq.md": FAQ, "new.md": "# New\n\nThe quokka smiles.\n"})
    kb.add([docs])
    (docs / "other.md").write_text("# Other\n\nThe folder is not empty: a folder found empty is kept (an unmounted drive?).\n")
    archive.unlink()
    gone = kb.add([docs])
    assert set(gone.removed) == {str(archive), f"{archive}!/guide.md", f"{archive}!/faq.md", f"{archive}!/new.md"}
    assert [d.path for d in kb.documents.list()] == [str(docs / "other.md")] and hit_paths(kb, "pangolin") == []


def test_remove_an_archive_removes_its_members(kb, tmp_path):
    archive = make_tar(tmp_path / "docs" / "m.tar.gz", {"guide.md": GUIDE, "faq.md": FAQ}, "w:gz")
    kb.add([archive])
    removed = kb.documents.remove([archive])
    assert {r.path for r in removed} == {str(archive), f"{archive}!/guide.md", f"{archive}!/faq.md"}
    assert kb.documents.list() == []


def test_dotdot_and_absolute_member_names_are_only_names(kb, tmp_path):
    docs = tmp_path / "docs"
    archive = make_zip(docs / "evil.zip", {"../../etc/passwd": "The mongoose guards the door.\n",
                                           "/abs/secret.txt": "The narwhal keeps a secret.\n"})
    tar = make_tar(docs / "evil.tar", {"../../../tmp/escape.txt": "The axolotl escaped nowhere.\n"})
    before = sorted(p.name for p in docs.rglob("*"))
    kb.add([docs])
    assert hit_paths(kb, "mongoose") == [f"{archive}!/etc/passwd"]
    assert hit_paths(kb, "narwhal") == [f"{archive}!/abs/secret.txt"]
    assert hit_paths(kb, "axolotl") == [f"{tar}!/tmp/escape.txt"]
    assert sorted(p.name for p in docs.rglob("*")) == before  # nothing extracted
    assert "mongoose" in kb.browse.fetch_doc("evil.zip!/etc/passwd").text  # the member, not /etc/passwd
    assert safe_name("C:\\Users\\..\\x\n.txt") == "Users/x?.txt" and safe_name("a/./b//c") == "a/b/c"
    assert archive_of(f"{archive}!/etc/passwd") == str(archive) and archive_of("/d/notes!/x.txt") is None


@pytest.mark.slow
def test_members_no_reader_takes_are_skipped_and_counted(kb, tmp_path):
    png = blank_png()  # a real picture with no text: skipped with or without OCR
    few = make_zip(tmp_path / "few" / "a.zip", {"guide.md": GUIDE, "photo.png": png, "blob.bin": bytes(range(256)) * 8})
    report = kb.add([few])
    assert set(report.added) == {f"{few}!/guide.md", str(few)} and not report.failed
    assert {p for p, _ in report.skipped} == {f"{few}!/photo.png", f"{few}!/blob.bin"}
    many = make_zip(tmp_path / "many" / "b.zip", {"guide.md": GUIDE, **{f"img/{i}.png": png for i in range(300)}})
    report = kb.add([many])
    [(path, reason)] = report.skipped  # one line, not 300
    assert path == str(many) and reason.startswith("300 files in the archive skipped") and ".png" in reason


def test_nested_archives_are_opened_one_level_deep(kb, tmp_path):
    innermost = io.BytesIO()
    with zipfile.ZipFile(innermost, "w") as z:
        z.writestr("deep.md", "The tapir is too deep.\n")
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("inner.md", "# Inner\n\nThe ibex climbs.\n")
        z.writestr("deeper.zip", innermost.getvalue())
    outer = make_zip(tmp_path / "docs" / "outer.zip", {"inner.zip": inner.getvalue(), "top.md": GUIDE})
    report = kb.add([outer])
    assert hit_paths(kb, "ibex")[0] == f"{outer}!/inner.zip!/inner.md"
    assert hit_paths(kb, "tapir") == []
    [(path, reason)] = report.skipped
    assert path == f"{outer}!/inner.zip!/deeper.zip" and "one level" in reason


@pytest.mark.slow
def test_zip_bombs_and_member_limits_are_refused_before_reading(kb, tmp_path):
    bomb = make_zip(tmp_path / "b" / "bomb.zip", {"zeros.txt": b"0" * (200 * 1024 * 1024)})  # 200 MB in ~200 KB
    started = time.perf_counter()
    report = kb.add([bomb])
    [(path, kind, reason)] = report.failed
    assert path == str(bomb) and kind == "too-large" and time.perf_counter() - started < 5
    tarbomb = make_tar(tmp_path / "b" / "bomb.tar.gz", {"zeros.txt": b"0" * (120 * 1024 * 1024)}, "w:gz")
    with pytest.raises(FileTooLargeError):
        list(Archive(str(tarbomb), tarbomb.read_bytes()).members())
    many = make_zip(tmp_path / "b" / "many.zip", {f"{i}.txt": "x" for i in range(bounds.MAX_MEMBERS + 1)})
    with pytest.raises(FileTooLargeError, match="files in the archive"):
        list(Archive(str(many), many.read_bytes()).members())
    with bounds.limit(10_000), pytest.raises(FileTooLargeError, match="ingest.max_file_mb"):
        zipped = make_zip(tmp_path / "b" / "big.zip", {"a.txt": "word " * 3000})
        list(Archive(str(zipped), zipped.read_bytes()).members())


def test_a_damaged_archive_fails_alone_and_keeps_its_old_members(kb, tmp_path):
    docs = tmp_path / "docs"
    archive = make_zip(docs / "m.zip", {"guide.md": GUIDE})
    (docs / "plain.md").write_text(FAQ, encoding="utf-8")
    kb.add([docs])
    archive.write_bytes(archive.read_bytes()[:40])
    os.utime(archive, ns=(time.time_ns() + 2 * 10**9,) * 2)
    report = kb.add([docs])
    [(path, kind, _)] = report.failed
    assert path == str(archive) and kind == "corrupt"
    assert hit_paths(kb, "flamingo") == [f"{archive}!/guide.md"]  # the last good version stays
    with pytest.raises(CorruptFileError):
        list(Archive(str(archive), archive.read_bytes()).members())


def test_non_utf8_member_names_do_not_stop_the_batch(kb, tmp_path):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", encoding="latin-1") as t:
        data = b"The caracal hunts at dusk.\n"
        info = tarfile.TarInfo("caf\xe9-\udce9.txt")  # an undecodable byte, as os.listdir returns it
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    path = tmp_path / "docs" / "names.tar"
    path.parent.mkdir()
    path.write_bytes(raw.getvalue())
    report = kb.add([path])
    assert not report.failed and hit_paths(kb, "caracal")[0].startswith(f"{path}!/caf")


@pytest.mark.slow
def test_cli_adds_a_folder_with_a_zip(tmp_path):
    docs = tmp_path / "docs"
    make_zip(docs / "manuals.zip", {"install/guide.md": GUIDE})
    (docs / "readme.txt.gz").write_bytes(gzip.compress(b"The walrus hums.\n"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["DOCQA_EMBED__PROVIDER"] = "none"
    src = Path(__file__).resolve().parents[2] / "src"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))

    def docqa(*args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), *args],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc

    docqa("add", str(docs))
    hits = json.loads(docqa("search", "flamingo installer", "--json").stdout)
    assert hits[0]["path"] == f"{docs / 'manuals.zip'}!/install/guide.md"
    listed = json.loads(docqa("list", "--json").stdout)
    assert {Path(d["path"]).name for d in listed} >= {"manuals.zip", "readme.txt.gz"}
    assert any(d["path"].endswith("manuals.zip!/install/guide.md") for d in listed)


@pytest.mark.slow
def test_citations_show_the_member_path(tmp_path, embedder):
    from docqa.llm import OpenAICompatModel

    from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

    archive = make_zip(tmp_path / "docs" / "manuals.zip", {"install/guide.md": GUIDE, "faq.md": FAQ})
    replies = [{"text": "Run the flamingo installer twice, then reboot [1].", "usage": (300, 20)}, {"text": "VERIFIED"}]
    with ScriptedServer(replies) as server:
        settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "openai", "base_url": server.base_url,
                                                             "timeout": 3, "max_retries": 0})
        model = OpenAICompatModel(server.base_url, "scripted", timeout=3, max_retries=0)
        with KnowledgeBase(settings, embedder=embedder, chat_model=model) as kb:
            kb.add([tmp_path / "docs"])
            answer = kb.ask("How do I run the flamingo installer?")
            [citation] = answer.citations
            assert citation.path == f"{archive}!/install/guide.md" and "guide.md" in citation.label
            text = kb.documents.text(citation.document_id)
            assert text[citation.char_start:citation.char_end] == citation.quote


def test_an_emptied_archive_removes_its_members(kb, tmp_path):
    archive = make_zip(tmp_path / "docs" / "m.zip", {"guide.md": GUIDE, "faq.md": FAQ})
    kb.add([tmp_path / "docs"])
    rewrite(archive, make_zip, {})
    report = kb.add([tmp_path / "docs"])
    assert set(report.removed) == {f"{archive}!/guide.md", f"{archive}!/faq.md"} and not report.failed
    assert [r.path for r in kb.documents.list()] == [str(archive)] and hit_paths(kb, "flamingo") == []


def test_an_update_cut_short_is_finished_by_the_next_add(kb, tmp_path):
    """Members are written before the archive's own document: after a crash between the two, the
    archive's row still holds the old hash, so the next add reads the archive again."""
    docs = tmp_path / "docs"
    archive = make_zip(docs / "m.zip", {"guide.md": GUIDE, "faq.md": FAQ})
    kb.add([docs])
    rewrite(archive, make_zip, {"guide.md": GUIDE.replace("flamingo", "heron"), "faq.md": FAQ})
    kb.add([docs])
    conn = sqlite3.connect(kb.store.path)  # the state a crash before the archive's row leaves
    with conn:
        conn.execute("UPDATE documents SET content_hash = 'old', size = 1 WHERE path = ?", (str(archive),))
    conn.close()
    report = kb.add([docs])
    assert report.updated == [str(archive)] and set(report.unchanged) == {f"{archive}!/guide.md", f"{archive}!/faq.md"}
    assert hit_paths(kb, "heron") == [f"{archive}!/guide.md"]


def test_a_tar_zst_archive(kb, tmp_path):
    pytest.importorskip("zstandard")  # a pinned dependency; missing only in an environment not reinstalled
    plain = make_tar(tmp_path / "plain.tar", {"install/guide.md": GUIDE})
    archive = tmp_path / "docs" / "manuals.tar.zst"
    archive.parent.mkdir()
    archive.write_bytes(_zstd(plain.read_bytes()))
    report = kb.add([tmp_path / "docs"])
    assert set(report.added) == {str(archive), f"{archive}!/install/guide.md"}
    assert hit_paths(kb, "flamingo")[0] == f"{archive}!/install/guide.md"
