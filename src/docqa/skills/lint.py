"""Reading SKILL.md: the front matter and the four sections, checked, each problem named by file
and line ('docqa skills lint' prints them; a skill with problems is not loaded)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from docqa.skills.skill import SECTIONS, SKILL_FILE, Skill, relative_to_origin

FIELDS = ("name", "description", "triggers")
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME, MAX_DESCRIPTION, MAX_TRIGGER, MAX_BODY = 64, 1024, 100, 12_000
_HEADING = re.compile(r"^#{1,3}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True, slots=True)
class Problem:
    file: Path
    line: int
    message: str
    origin: str = ""  # where the skill came from (builtin | skills.paths | knowledge base), when loaded
    root: Path | None = None  # that origin's folder

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"

    def shown(self) -> str:
        """As clients see it: the file relative to its origin's folder, never an absolute path."""
        where = f"{self.origin}: " if self.origin else ""
        return f"{where}{relative_to_origin(self.file, self.root)}:{self.line}: {self.message}"


def read_skill(folder: Path, origin: str) -> tuple[Skill | None, list[Problem]]:
    """The skill in `folder` (None when its SKILL.md has problems) and the problems found."""
    path = folder / SKILL_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(path, 1, f"cannot be read ({exc}); a skill needs a UTF-8 SKILL.md")]
    lines = text.splitlines()
    problems: list[Problem] = []
    meta, body_start = _front_matter(path, lines, problems)
    if meta is None:
        return None, problems
    fields = _fields(path, folder, meta, problems)
    sections = _sections(path, lines, body_start, problems)
    body = "\n".join(lines[body_start:]).strip()
    if len(body) > MAX_BODY:
        problems.append(Problem(path, body_start + 1, f"the body is {len(body)} characters: keep it under {MAX_BODY} "
                                "and move detail into reference/*.md files the agent reads on demand"))
    if problems:
        return None, sorted(problems, key=lambda p: p.line)
    return Skill(fields["name"], fields["description"], tuple(fields["triggers"]), body, folder, origin, sections), []


def lint(path: Path) -> tuple[list[Skill], list[Problem]]:
    """Check a skill folder, its SKILL.md, or a folder of skill folders."""
    path = Path(path)
    if path.is_file():
        if path.name != SKILL_FILE:
            return [], [Problem(path, 1, f"not a skill: name a folder holding {SKILL_FILE}, or the {SKILL_FILE} itself")]
        path = path.parent
    if not path.exists():
        return [], [Problem(path, 1, "no such file or folder")]
    folders = [path] if (path / SKILL_FILE).is_file() else skill_folders(path)
    if not folders:
        return [], [Problem(path, 1, f"no {SKILL_FILE} here or in its subfolders: a skill is a folder with a {SKILL_FILE}")]
    skills, problems = [], []
    for folder in folders:
        skill, found = read_skill(folder, "lint")
        problems += found
        skills += [skill] if skill else []
    return skills, problems


def skill_folders(root: Path) -> list[Path]:
    """The skill folders directly under `root` (or `root` itself when it is one)."""
    if (root / SKILL_FILE).is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / SKILL_FILE).is_file())


def _front_matter(path: Path, lines: list[str], problems: list[Problem]) -> tuple[dict | None, int]:
    """The YAML between the first two '---' lines, with each key's line number; and where the body starts."""
    if not lines or lines[0].strip() != "---":
        problems.append(Problem(path, 1, "no front matter: SKILL.md must start with a '---' line, then name: and "
                                "description:, then '---'"))
        return None, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        problems.append(Problem(path, 1, "the front matter opened here is never closed: add a '---' line after it"))
        return None, 0
    block = "\n".join(lines[1:end])
    try:
        node = yaml.compose(block, Loader=yaml.SafeLoader)
        data = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 2
        problems.append(Problem(path, line, f"the front matter is not valid YAML: {getattr(exc, 'problem', None) or exc}"))
        return None, end + 1
    if not isinstance(data, dict):
        problems.append(Problem(path, 2, "the front matter must be a mapping of keys (name:, description:, triggers:)"))
        return None, end + 1
    at = {k.value: k.start_mark.line + 2 for k, _ in node.value} if isinstance(node, yaml.MappingNode) else {}
    return {"values": data, "lines": at, "end": end + 1}, end + 1


def _fields(path: Path, folder: Path, meta: dict, problems: list[Problem]) -> dict:
    values, at = meta["values"], meta["lines"]
    for key in values:
        if key not in FIELDS:
            problems.append(Problem(path, at.get(key, 2), f"unknown key {key!r}: the front matter takes {', '.join(FIELDS)}"))
    name, description, triggers = values.get("name"), values.get("description"), values.get("triggers", [])
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem(path, at.get("name", 1), "name is missing or empty: add 'name: my-skill' (lowercase "
                                "letters, digits and hyphens)"))
    elif not NAME.match(name) or len(name) > MAX_NAME:
        problems.append(Problem(path, at["name"], f"name {name!r} must be lowercase letters, digits and single hyphens, "
                                f"at most {MAX_NAME} characters (e.g. compare-versions)"))
    elif name != folder.name:
        problems.append(Problem(path, at["name"], f"name {name!r} differs from its folder {folder.name!r}: rename one"))
    if not isinstance(description, str) or not description.strip():
        problems.append(Problem(path, at.get("description", 1), "description is missing or empty: say in a sentence what "
                                "the skill does and when to use it (the agent chooses by it)"))
    elif len(description) > MAX_DESCRIPTION:
        problems.append(Problem(path, at["description"], f"description is {len(description)} characters: at most {MAX_DESCRIPTION}"))
    if not isinstance(triggers, list) or not all(isinstance(t, str) and t.strip() and len(t) <= MAX_TRIGGER for t in triggers):
        problems.append(Problem(path, at.get("triggers", 1), f"triggers must be a list of phrases (each at most {MAX_TRIGGER} "
                                "characters), e.g. triggers: [compare, \"what changed\"]"))
        triggers = []
    return {"name": name, "description": (description or "").strip(), "triggers": [t.strip() for t in triggers]}


def _sections(path: Path, lines: list[str], start: int, problems: list[Problem]) -> dict[str, str]:
    """The body's sections by heading; the four a procedure needs must be there and not empty."""
    found: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    in_code = False
    for i in range(start, len(lines)):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_code = not in_code
        heading = None if in_code else _HEADING.match(line)
        if heading:
            title = heading.group(1).strip().rstrip(":")
            key = next((s for s in SECTIONS if s.lower() == title.lower()), None)
            if key and key in found:
                problems.append(Problem(path, i + 1, f"section {key!r} appears twice (first on line {found[key][0]})"))
            current = key if key and key not in found else None
            if current:
                found[current] = (i + 1, [])
            continue
        if current:
            found[current][1].append(line)
    for name in SECTIONS:
        if name not in found:
            problems.append(Problem(path, len(lines) or 1, f"section {name!r} is missing: add a '## {name}' heading "
                                    "and its text"))
        elif not "\n".join(found[name][1]).strip():
            problems.append(Problem(path, found[name][0], f"section {name!r} is empty: write what it asks for"))
    return {name: "\n".join(text).strip() for name, (_, text) in found.items()}
