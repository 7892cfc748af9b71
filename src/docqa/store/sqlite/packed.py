"""A packed copy of one model's vector matrix beside the knowledge base file, for a fast first search.

Reading 300k vectors through sqlite3 (one row and one bytes object each) takes ~1.5 s; the same
matrix read from one flat file takes a tenth of that.  The copy, `<kb file>.vectors-<model digest>`,
holds the matrix in the order of its rows, each row's chunk rowid and embedded-text hash, and the
index generation (`meta.generation`, changed in the transaction of every write to chunks or
vectors) it was made at:

- on open, a copy made at the current generation is the matrix, read as it is;
- a copy of an older generation is brought in step by difference: the (rowid, text hash) pairs of
  the chunks with a vector are read from SQLite (no vectors), rows whose pair is in the copy take
  its vector, and only the others' vectors are read from SQLite (by text hash: equal hashes, equal
  vectors, so a rowid used again for another chunk is never given the old chunk's vector);
- a missing, truncated or unreadable copy (or one of another model) is rebuilt from SQLite.

After a load that was not the copy as it is, the copy is written again (to a temporary file, then
renamed over the old one, on a thread of its own, so the search does not wait for the disk).
Writers do not touch the file: the first load after a write brings it in step, reading from SQLite
only what the write changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import struct
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MAGIC, END = b"DQVEC001", b"DQVECEND"
_FETCH = 500  # text hashes per query when vectors are read by difference
_REBUILD_SHARE = 0.5  # more than this share of the rows changed: read everything in one query


@dataclass(slots=True)
class Packed:
    """One model's vectors: chunk rowids, text hashes (fixed-width bytes) and the float16 matrix, row by row."""

    rowids: np.ndarray
    hashes: np.ndarray
    matrix: Any  # np.ndarray (read, mapped or built) or Rows (a synced load's kept and added rows)
    source: str = "sqlite"  # how it was loaded: "packed" (as it was), "synced" (by difference) or "sqlite"
    int8: tuple[np.ndarray, float] | None = None  # the int8 scan's matrix (dims x rows) and scale, when kept


def packed_path(db_path: str, model: str) -> Path:
    return Path(f"{db_path}.vectors-{hashlib.sha1(model.encode()).hexdigest()[:12]}")


def drop_others(db_path: str, model: str | None) -> None:
    """Remove the packed copies of every model but `model` (their vectors were dropped)."""
    keep = packed_path(db_path, model).name if model else None
    for path in Path(db_path).parent.glob(Path(db_path).name + ".vectors-*"):
        if path.name != keep:
            path.unlink(missing_ok=True)


def load(conn: sqlite3.Connection, db_path: str, model: str, token: str | None) -> Packed:
    """The vectors of `model` at generation `token`, from the packed copy when it can serve (see above)."""
    copy = read(packed_path(db_path, model), model)
    if copy is not None and token is not None and copy.token == token:
        return copy.packed
    if copy is not None:
        try:
            return _sync(conn, model, copy.packed)
        except (KeyError, ValueError):  # a vector gone between the two reads, or of another width: read them all
            pass
    return from_sqlite(conn, model)


@dataclass(slots=True)
class _Copy:
    token: str
    packed: Packed


def read(path: Path, model: str) -> _Copy | None:
    """A packed copy and the generation it was made at; None when it is missing, of another model,
    truncated or damaged.  The float16 matrix is mapped, not read: the int8 scan reads the int8
    copy, and only the few rows re-scored per search are paged in."""
    try:
        with path.open("rb") as f:
            head = f.read(len(MAGIC) + 8)
            if len(head) < len(MAGIC) + 8 or head[: len(MAGIC)] != MAGIC:
                return None
            size, crc = struct.unpack("<II", head[len(MAGIC):])
            raw = f.read(size)
            header = json.loads(raw)
            rows, dims, width = int(header["rows"]), int(header["dims"]), int(header["width"]) or 1
            scale = header.get("int8_scale")
            body = rows * (8 + width) + rows * dims * (2 + (scale is not None))
            if header["model"] != model or os.fstat(f.fileno()).st_size != len(head) + size + body + len(END):
                return None
            rowids = np.fromfile(f, dtype="<i8", count=rows)
            hashes = np.fromfile(f, dtype=f"S{width}", count=rows)
            if zlib.crc32(rowids.tobytes(), zlib.crc32(hashes.tobytes(), zlib.crc32(raw))) != crc:
                return None
            start = f.tell()
            f.seek(body - rows * (8 + width), os.SEEK_CUR)
            if f.read() != END:
                return None
            f.seek(start + rows * dims * 2)
            q8t = np.fromfile(f, dtype=np.int8, count=rows * dims).reshape(dims, rows) if scale is not None else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    matrix = (np.memmap(path, dtype="<f2", mode="r", offset=start, shape=(rows, dims)) if rows * dims
              else np.empty((rows, dims), dtype=np.float16))
    int8 = (q8t, float(scale)) if q8t is not None and scale is not None else None
    return _Copy(str(header["token"]), Packed(rowids, hashes, matrix, "packed", int8))


def write(path: Path, model: str, token: str, packed: Packed) -> None:
    """Write the copy whole to a temporary file and rename it over `path` (readers see the old or the new)."""
    rowids = np.ascontiguousarray(packed.rowids, dtype="<i8")
    hashes = np.ascontiguousarray(packed.hashes)
    width = hashes.dtype.itemsize if len(hashes) else 1
    if not len(hashes):
        hashes = np.empty(0, dtype="S1")
    header = {"model": model, "token": token, "rows": len(rowids), "dims": packed.matrix.shape[1], "width": width}
    if packed.int8 is not None:
        header["int8_scale"] = packed.int8[1]
    raw = json.dumps(header).encode()
    crc = zlib.crc32(rowids.tobytes(), zlib.crc32(hashes.tobytes(), zlib.crc32(raw)))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with tmp.open("wb") as f:
            f.write(MAGIC + struct.pack("<II", len(raw), crc) + raw)
            f.write(rowids.tobytes())
            f.write(hashes.tobytes())
            for part in packed.matrix.parts() if isinstance(packed.matrix, Rows) else [packed.matrix]:
                f.write(np.ascontiguousarray(part, dtype="<f2").tobytes())
            if packed.int8 is not None:
                f.write(np.ascontiguousarray(packed.int8[0], dtype=np.int8).tobytes())
            f.write(END)
        os.replace(tmp, path)
    except OSError as exc:  # a read-only folder, a full disk: searches still work, from SQLite
        log.info("packed vectors not written to %s: %s", path, exc)
        tmp.unlink(missing_ok=True)


_writers: list[threading.Thread] = []
_writers_lock = threading.Lock()


def write_later(path: Path, model: str, token: str, packed: Packed) -> None:
    """Write the copy on a thread of its own (not a daemon: a short-lived process finishes it before exiting)."""
    thread = threading.Thread(target=write, args=(path, model, token, packed), name="docqa-packed-vectors")
    with _writers_lock:
        _writers[:] = [t for t in _writers if t.is_alive()] + [thread]
    thread.start()


def wait_writes() -> None:
    """Wait until the packed copies being written in this process are on disk."""
    with _writers_lock:
        pending = list(_writers)
    for thread in pending:
        thread.join()


_ROWS = "FROM chunks c JOIN embeddings e ON e.model = ? AND e.text_hash = c.embed_hash"


def from_sqlite(conn: sqlite3.Connection, model: str) -> Packed:
    """Every vector of `model` read from SQLite in one query (SQLite walks them in text hash order:
    they are put in rowid order here, cheaper than ORDER BY over the vectors)."""
    rows = conn.execute(f"SELECT c.rowid, c.embed_hash, e.vector {_ROWS}", (model,)).fetchall()
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    hashes = np.array([r[1].encode() for r in rows], dtype=np.bytes_) if rows else np.empty(0, dtype="S1")
    dims = len(rows[0][2]) // 2 if rows else 0
    blob = b"".join(r[2] for r in rows)
    del rows
    matrix = np.frombuffer(blob, dtype=np.float16).reshape(len(rowids), dims)
    order = np.argsort(rowids, kind="stable")  # rows by chunk rowid, so a later write's rows come last
    return Packed(rowids[order], hashes[order], matrix[order])


def _sync(conn: sqlite3.Connection, model: str, old: Packed) -> Packed:
    """The current vectors: the copy's rows that are still there as they were, the rest read from SQLite."""
    rows = conn.execute(f"SELECT c.rowid, c.embed_hash {_ROWS}", (model,)).fetchall()
    now_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    now_hashes = np.array([r[1].encode() for r in rows], dtype=np.bytes_) if rows else np.empty(0, dtype="S1")
    del rows
    order = np.argsort(now_ids, kind="stable")  # rowid order, as the copy (sorting here is cheaper than ORDER BY)
    now_ids, now_hashes = now_ids[order], now_hashes[order]
    rowids, hashes, matrix = old.rowids, old.hashes, old.matrix
    dims = matrix.shape[1]
    if not len(now_ids):
        return Packed(now_ids, now_hashes, np.empty((0, dims), dtype=np.float16), "synced")
    n = len(rowids)
    order = np.argsort(rowids, kind="stable")
    at = np.minimum(np.searchsorted(rowids[order], now_ids), max(n - 1, 0))
    source = order[at] if n else np.zeros(len(now_ids), dtype=np.int64)
    kept = (rowids[source] == now_ids) & (hashes[source] == now_hashes) if n else np.zeros(len(now_ids), bool)
    missing = np.flatnonzero(~kept)
    if len(missing) > _REBUILD_SHARE * len(now_ids) or (len(missing) and matrix.shape[0] == 0):
        return from_sqlite(conn, model)
    k = len(now_ids) - len(missing)
    if k and kept[:k].all() and (k == 1 or bool((np.diff(source[:k]) > 0).all())) and old.int8 is not None:
        # the common write: rows removed, rows added after the rest, the others in their order; the kept
        # rows stay in the mapped copy, and the int8 matrix is cut and extended, not computed again
        added = _fetch(conn, model, now_hashes[k:], dims)
        keep = source[:k]
        int8 = _extend((old.int8[0] if k == n else old.int8[0][:, keep], old.int8[1]), added)
        if int8 is not None:
            return Packed(now_ids, now_hashes, Rows(matrix, None if k == n else keep, added), "synced", int8)
    out = np.empty((len(now_ids), dims), dtype=np.float16)
    out[kept] = matrix[source[kept]]
    out[missing] = _fetch(conn, model, now_hashes[missing], dims)
    return Packed(now_ids, now_hashes, out, "synced")


class Rows:
    """The float16 matrix of a synced load without copying the old rows: rows `keep` of the mapped old
    matrix (all of them when None), then the added rows.  The int8 scan reads only the rows it
    re-scores (`rows[indexes]`); the packed copy is written from it part by part."""

    def __init__(self, old: np.ndarray, keep: np.ndarray | None, added: np.ndarray):
        self.old, self.keep, self.added = old, keep, added
        self.kept = len(old) if keep is None else len(keep)
        self.shape = (self.kept + len(added), old.shape[1])
        self.dtype = np.dtype(np.float16)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: np.ndarray) -> np.ndarray:
        index = np.asarray(index)
        out = np.empty((len(index), self.shape[1]), dtype=np.float16)
        old = index < self.kept
        rows = index[old] if self.keep is None else self.keep[index[old]]
        out[old] = self.old[rows]
        out[~old] = self.added[index[~old] - self.kept]
        return out

    def parts(self, block: int = 65536):
        """The rows in order, a block at a time."""
        for start in range(0, self.kept, block):
            stop = min(start + block, self.kept)
            yield self.old[start:stop] if self.keep is None else self.old[self.keep[start:stop]]
        yield self.added


def _fetch(conn: sqlite3.Connection, model: str, hashes: np.ndarray, dims: int) -> np.ndarray:
    """The vectors of these text hashes (KeyError: one is gone; ValueError: another width)."""
    wanted = list(dict.fromkeys(h.decode() for h in hashes))
    vectors: dict[str, bytes] = {}
    for i in range(0, len(wanted), _FETCH):
        part = wanted[i : i + _FETCH]
        vectors.update(conn.execute(
            f"SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({','.join('?' * len(part))})",
            [model, *part]))
    out = np.empty((len(hashes), dims), dtype=np.float16)
    for row, h in enumerate(hashes):
        out[row] = np.frombuffer(vectors[h.decode()], dtype=np.float16)
    return out


def _extend(int8: tuple[np.ndarray, float] | None, added: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The int8 scan's matrix with the added rows, when they fit its scale (then it is exactly what
    quantising the whole matrix would give); None: quantise it all again."""
    from docqa.store.matrix import abs_max, quantise

    if int8 is None or abs_max(added) >= int8[1] * 127 * (1 - 1e-6):  # (equal: not sure of the rounding)
        return None
    if not len(added):
        return int8
    return np.concatenate([int8[0], quantise(added, int8[1])[0]], axis=1), int8[1]
