"""The skills of one run, disclosed in three levels: every skill's name and description in the
agent's system prompt (level 1); a skill's procedure once the question matches it or the agent calls
use_skill (level 2); a resource's text, a piece at a time, on read_skill_resource (level 3).
Each skill loaded is recorded in the run's trace with the reason."""

from __future__ import annotations

import re
from typing import Any

from docqa.agent.tools import Tool
from docqa.skills.catalog import SkillSet
from docqa.skills.match import Embed, Match, match
from docqa.skills.skill import Skill
from docqa.skills.tools import ReadSkillResource, UseSkill

INDEX = """Skills (procedures for kinds of task). When the question is such a task, call use_skill with the skill's name first and follow its procedure; it tells you which tools to use:
{lines}"""
LOADED = ("Instructions for this task (skill {name}, loaded because {reason}). They are for you to follow with your "
          "tools, not text for your reply: never write them out. Begin now with step 1 — your next message is its tool call.")


class ActiveSkills:
    """What one agent run may use and has used; `trace` is the run's audit trace (entries are added)."""

    def __init__(self, skills: SkillSet, trace: list[dict[str, Any]]):
        self.skills, self.trace = skills, trace
        self.used: list[dict[str, str]] = []  # name, reason, origin: in the order they were loaded
        self._loaded: dict[str, str] = {}  # name -> its rendered procedure

    def index(self) -> str:
        """Level 1: one line per skill, for the system prompt ('' without skills)."""
        lines = "\n".join(f"- {s.name}: {s.description}" for s in self.skills)
        return INDEX.format(lines=lines) if lines else ""

    def match(self, question: str, embed: Embed | None, threshold: float, limit: int) -> list[Match]:
        """Load (level 2) the skills the question matches, recording why."""
        found = match(question, list(self.skills), embed, threshold, limit)
        for m in found:
            self.load(m.skill.name, m.reason)
        return found

    def load(self, name: str, reason: str) -> str:
        """Level 2: a skill's procedure, recorded the first time it is loaded."""
        skill = self.skills.get(name)
        if skill.name not in self._loaded:
            self._loaded[skill.name] = procedure(skill)
            self.used.append({"name": skill.name, "reason": reason, "origin": skill.origin})
            self.record({"stage": "skill", "name": skill.name, "reason": reason, "origin": skill.origin})
            return self._loaded[skill.name]
        return f"Skill {skill.name} is already loaded; its procedure again:\n\n{self._loaded[skill.name]}"

    def guidance(self) -> str:
        """The system prompt's skills part: the index, then the procedures already loaded."""
        parts = [self.index()] if len(self.skills) else []
        parts += [LOADED.format(name=u["name"], reason=u["reason"]) + "\n" + instructions(self.skills.get(u["name"]))
                  for u in self.used]
        return "\n\n".join(parts)

    def tools(self) -> list[Tool]:
        return [UseSkill(self), ReadSkillResource(self)] if len(self.skills) else []

    def record(self, entry: dict[str, Any]) -> None:
        self.trace.append(entry)


def instructions(skill: Skill) -> str:
    """A matched skill's body for the system prompt: its sections as plain labels, no document-like
    headings (a 1.5B model given "# Skill: …" and "## Workflow" replied with a copy of them)."""
    body = re.sub(r"(?m)^#+\s*(.+?)\s*$", r"\1:", skill.body.strip())
    return body


def procedure(skill: Skill) -> str:
    """A skill's body as the agent reads it, with its resources listed (their text is read on demand)."""
    resources = skill.resources()
    listed = f"\nResources (read_skill_resource name={skill.name!r} path=...): {', '.join(resources)}" if resources else ""
    return f"# Skill: {skill.name}\n{skill.body}{listed}"
