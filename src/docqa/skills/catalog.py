"""The skills a knowledge base offers: built in (shipped in this package), from `skills.paths`, and
from the `skills/` folder beside the knowledge base file, later ones replacing earlier ones of the
same name.  A skill whose SKILL.md has problems is left out and its problems kept for the front ends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from docqa.errors import NotFoundError
from docqa.settings import Settings
from docqa.skills.lint import Problem, read_skill, skill_folders
from docqa.skills.skill import Skill

BUILTIN = Path(__file__).resolve().parent / "builtin"


class SkillSet:
    """Skills by name, in the order they were found; `problems`: the SKILL.md files left out, and why."""

    def __init__(self, skills: list[Skill] | None = None, problems: list[Problem] | None = None,
                 replaced: dict[str, str] | None = None):
        self._skills = {s.name: s for s in skills or []}
        self.problems = list(problems or [])
        self.replaced = dict(replaced or {})  # name -> the origin a later skill of that name replaced

    def shown_problems(self) -> list[str]:
        """The problems as clients see them: files relative to their origin's folder, never absolute."""
        return [p.shown() for p in self.problems]

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    @property
    def names(self) -> list[str]:
        return list(self._skills)

    def get(self, name: str) -> Skill:
        skill = self._skills.get((name or "").strip())
        if skill is None:
            raise NotFoundError(f"no skill named {name!r}; the skills are: {', '.join(self._skills) or 'none'} "
                                "(see 'docqa skills list')")
        return skill


def load_skills(roots: list[tuple[Path, str]]) -> SkillSet:
    """Read every skill under `roots` ((folder, origin) pairs, weakest first)."""
    skills: dict[str, Skill] = {}
    problems: list[Problem] = []
    replaced: dict[str, str] = {}
    for root, origin in roots:
        for folder in skill_folders(root):
            skill, found = read_skill(folder, origin)
            problems += [replace(p, origin=origin, root=root) for p in found]
            if skill is None:
                continue
            skill = replace(skill, root=root)
            if skill.name in skills:
                replaced[skill.name] = skills[skill.name].origin
            skills[skill.name] = skill
    return SkillSet(list(skills.values()), problems, replaced)


def skill_roots(settings: Settings) -> list[tuple[Path, str]]:
    """Where a knowledge base's skills come from, weakest first (none when skills are off)."""
    s = settings.skills
    if not s.enabled:
        return []
    roots = [(BUILTIN, "builtin")] if s.builtin else []
    roots += [(Path(p).expanduser(), "skills.paths") for p in s.paths]
    if "://" not in settings.kb or settings.kb.startswith("sqlite:///"):  # a database server has no folder
        roots.append((settings.kb_path.parent / "skills", "knowledge base"))
    return roots
