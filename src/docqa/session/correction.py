"""A maintainer's correction: the right answer to a logged question, or a missing fact, written as a
short Markdown note that is indexed at once into the run's collection (a run over every collection:
the `corrections` collection) and found and cited by later answers there, titled as a correction.
Who wrote it, when, and for which run are in the note itself.  It belongs to that collection: those
who cannot see the collection never see the note, and an editor of one collection cannot plant
text in another's answers."""

from __future__ import annotations

import os
import re
from pathlib import Path

from docqa.errors import InputError
from docqa.types import RunRecord

COLLECTION = "corrections"
MAX_CHARS = 4000
_RUN_IN_NAME = re.compile(r"correction-([0-9a-f]+)(?:-\d+)?\.md$")


def home(run: RunRecord) -> str:
    """The collection a correction of `run` is indexed in: the run's own."""
    return run.collection or COLLECTION


def note(run: RunRecord, text: str, author: str, when: str) -> str:
    """The Markdown note: the question as its title, the maintainer's text, then who, when and which run."""
    body = (text or "").strip()
    if not body:
        raise InputError("the correction is empty: write the right answer or the missing fact, e.g. "
                         "docqa correct RUN_ID \"Backups are kept for 35 days.\"")
    if len(body) > MAX_CHARS:
        raise InputError(f"the correction is {len(body):,} characters: keep it under {MAX_CHARS:,} (a short note; "
                         "add longer material as a document with 'docqa add')")
    question = " ".join(run.question.split())
    return (f"# Correction: {question}\n\n{body}\n\n"
            f"Question: {question}\n\n"
            f"Written by {author} on {when[:10]} for run {run.id}.\n")


def write(directory: Path, run: RunRecord, content: str) -> Path:
    """Save the note as `correction-<run id>.md` (a second note for the same run gets `-2`, `-3`, …)."""
    directory.mkdir(parents=True, exist_ok=True)
    path, k = directory / f"correction-{run.id}.md", 1
    while path.exists():
        k += 1
        path = directory / f"correction-{run.id}-{k}.md"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)
    return path


def corrected_runs(paths: list[str]) -> set[str]:
    """The runs the notes at `paths` correct (their ids are in the file names)."""
    return {m.group(1) for p in paths if (m := _RUN_IN_NAME.search(p.replace("\\", "/")))}
