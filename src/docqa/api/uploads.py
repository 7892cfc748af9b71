"""Uploaded files on the server's disk: one folder per collection under `api.upload_dir`, file names
made safe (no `..`, no control characters, no hidden files; folders only as a dropped folder's
relative path, each part a safe name), written atomically."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import unicodedata
from pathlib import Path
from typing import BinaryIO

from docqa.errors import InputError
from docqa.settings import Settings

_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_MAX_NAME_BYTES = 200
_COPY_CHUNK = 1024 * 1024


def upload_root(settings: Settings) -> Path:
    """`api.upload_dir`, else `uploads` beside the knowledge base file."""
    if settings.api.upload_dir:
        return Path(settings.api.upload_dir).expanduser().resolve()
    return (settings.kb_path.parent / "uploads").resolve()


def safe_name(raw: str | None) -> str:
    """A file name that can only land inside its folder: the last path component, NFC, printable,
    without characters Windows forbids, without leading dots (hidden) or trailing dots and spaces."""
    name = unicodedata.normalize("NFC", raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable())
    name = _UNSAFE.sub("_", name).strip(" .\t")
    if not name:
        raise InputError(f"{raw!r} is not a usable file name: send the file's own name, e.g. 'report.pdf'")
    if len(name.encode("utf-8")) > _MAX_NAME_BYTES:
        stem, suffix = os.path.splitext(name)
        suffix = suffix if len(suffix.encode("utf-8")) <= 16 else ""
        room = _MAX_NAME_BYTES - len(suffix.encode("utf-8"))
        name = stem.encode("utf-8")[:room].decode("utf-8", "ignore").rstrip(" .") + suffix
    return name


def safe_path(raw: str | None, depth: int = 16) -> str:
    """A relative path kept from a dropped folder ('docs/2023/report.pdf'): each folder made a safe
    name; '.', '..' and empty parts refused, as are more than `depth` parts."""
    parts = unicodedata.normalize("NFC", raw or "").replace("\\", "/").strip("/").split("/")
    if len(parts) > depth or any(p.strip() in ("", ".", "..") for p in parts):
        raise InputError(f"{raw!r} is not a usable relative path: send folder/file names without '.' or '..'")
    return "/".join(safe_name(p) for p in parts)


class Uploads:
    """The upload folder: where an uploaded file of a collection is kept, and cleaning up after it."""

    def __init__(self, root: Path):
        self.root = root

    def folder(self, collection: str) -> Path:
        """The collection's folder: its name when that is safe, else a safe form plus a hash of the name."""
        safe = re.sub(r"[^\w.-]", "_", collection).strip("._")[:64] or "collection"  # file names have limits
        if safe != collection:
            safe += "-" + hashlib.blake2b(collection.encode("utf-8"), digest_size=4).hexdigest()
        return self.root / safe

    def save(self, collection: str, name: str, data: BinaryIO) -> Path:
        """Write `data` to the collection's folder as `name` (made safe: a name, or a relative path of
        safe names), replacing a file of that name."""
        root = self.folder(collection)
        target = root / name
        if not target.resolve().is_relative_to(root.resolve()) or target.resolve() == root.resolve():
            raise InputError(f"{name!r} is not a usable file name")  # safe_name/safe_path make this impossible
        folder = target.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(data, out, _COPY_CHUNK)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def owns(self, path: str | Path) -> bool:
        return Path(path).resolve().is_relative_to(self.root)

    def discard(self, path: str | Path) -> None:
        """Delete an uploaded file (a file elsewhere, added from a server folder, is never touched)."""
        if self.owns(path):
            Path(path).unlink(missing_ok=True)

    def drop_collection(self, collection: str) -> None:
        folder = self.folder(collection)
        if folder.is_dir() and self.owns(folder) and folder.resolve() != self.root:
            shutil.rmtree(folder, ignore_errors=True)
