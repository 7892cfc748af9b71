"""A skill: a folder with SKILL.md (front matter and a procedure in four sections) and optional
resources (reference/*.md, templates, examples) that the agent may read, never run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from docqa.errors import SkillError

SKILL_FILE = "SKILL.md"
SECTIONS = ("Workflow", "Required evidence", "Stop conditions", "Report rules")
PIECE_LINES = 80  # lines of a resource one read returns unless fewer are asked for
MAX_PIECE_LINES = 200
MAX_PIECE_CHARS = 4000  # a piece never floods the agent's context, whatever its lines hold


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    triggers: tuple[str, ...]
    body: str  # the procedure: level 2, loaded on use
    folder: Path
    origin: str  # builtin | skills.paths | knowledge base
    sections: dict[str, str] = field(default_factory=dict, compare=False)
    root: Path | None = field(default=None, compare=False)  # the folder of its origin it was found under

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE

    @property
    def shown_path(self) -> str:
        """Its SKILL.md relative to its origin's folder (never an absolute path: what clients see)."""
        return relative_to_origin(self.path, self.root)

    def resources(self) -> list[str]:
        """Its other files (level 3), as paths relative to its folder; hidden files left out."""
        root = self.folder.resolve()
        found = []
        for p in sorted(self.folder.rglob("*")):
            rel = p.relative_to(self.folder)
            if p.is_file() and rel.as_posix() != SKILL_FILE and not any(part.startswith(".") for part in rel.parts) \
                    and p.resolve().is_relative_to(root):
                found.append(rel.as_posix())
        return found

    def resource_path(self, path: str) -> Path:
        """The file a resource path names, refused (SkillError) when it would leave the skill's folder."""
        text = (path or "").strip().replace("\\", "/")
        rel = PurePosixPath(text)
        if not text or rel.is_absolute() or ".." in rel.parts or (rel.parts and rel.parts[0].endswith(":")):
            raise SkillError(f"{path!r} is not a path inside skill {self.name!r}: name one of its resources "
                             f"({', '.join(self.resources()) or 'it has none'})")
        root = self.folder.resolve()
        target = (root / rel).resolve()
        if not target.is_relative_to(root):  # a symbolic link pointing out of the folder
            raise SkillError(f"{path!r} leads outside skill {self.name!r}'s folder and is not read")
        if not target.is_file():
            raise SkillError(f"skill {self.name!r} has no resource {path!r}; it has: "
                             f"{', '.join(self.resources()) or 'none'}")
        return target

    def read_resource(self, path: str, offset: int = 1, limit: int = PIECE_LINES) -> str:
        """One piece of a resource, with line numbers and how to read on (text only; nothing is run)."""
        target = self.resource_path(path)
        try:
            lines = target.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            raise SkillError(f"skill {self.name!r}: {path} is not a UTF-8 text file, so it is not read") from None
        start = max(1, offset)
        limit = max(1, min(limit, MAX_PIECE_LINES))
        out: list[str] = []
        size, end = 0, start - 1
        for number in range(start, min(len(lines), start + limit - 1) + 1):
            line = f"{number:>5}| {lines[number - 1]}"
            if out and size + len(line) > MAX_PIECE_CHARS:
                break
            out.append(line[:MAX_PIECE_CHARS])
            size, end = size + len(line) + 1, number
        head = f"{self.name}/{path}: lines {start}–{end} of {len(lines)}"
        if not out:
            return f"{head}\n(nothing at line {start})"
        more = f"\n[more: call read_skill_resource with offset={end + 1}]" if end < len(lines) else ""
        return head + "\n" + "\n".join(out) + more

    def summary(self) -> dict:
        return {"name": self.name, "description": self.description, "triggers": list(self.triggers),
                "origin": self.origin, "path": self.shown_path, "resources": self.resources()}


def relative_to_origin(path: Path, root: Path | None) -> str:
    """`path` below `root` as a POSIX path; its last two parts (folder/file) when it is not below it."""
    try:
        return path.relative_to(root).as_posix() if root is not None else "/".join(path.parts[-2:])
    except ValueError:
        return "/".join(path.parts[-2:])
