"""The agent's skill tools: use_skill loads a skill's procedure (level 2), read_skill_resource reads
one of its files in pieces (level 3).  They read only the skill's own folder, never a document:
documents are read through the access-checked document tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docqa.agent.tools import Tool, ToolResult
from docqa.skills.skill import PIECE_LINES

if TYPE_CHECKING:
    from docqa.skills.active import ActiveSkills


class UseSkill(Tool):
    name = "use_skill"
    description = ("Load a skill's procedure by its name (from the skills list in your instructions): its workflow, "
                   "the evidence it needs, when to stop and how to report. Then follow it with the other tools.")
    parameters = {"type": "object", "properties": {"name": {"type": "string", "description": "The skill's name."}},
                  "required": ["name"]}

    def __init__(self, active: ActiveSkills):
        self.active = active

    def run(self, args: dict[str, Any]) -> ToolResult:
        name = str(args.get("name") or args.get("skill") or "").strip()
        if not name:
            raise ValueError(f"name is required: one of {', '.join(self.active.skills.names)}")
        text = self.active.load(name, "the agent called use_skill")
        return ToolResult(text, summary=f"loaded skill {name}", data={"skill": name}, trusted=True)


class ReadSkillResource(Tool):
    name = "read_skill_resource"
    description = ("Read a file a loaded skill lists under Resources (a reference, template or example), in pieces "
                   "of lines: offset (first line) and limit. Its text guides you; it is not a source to cite.")
    parameters = {"type": "object", "properties": {
        "name": {"type": "string", "description": "The skill's name."},
        "path": {"type": "string", "description": "The resource's path inside the skill, e.g. reference/checklist.md."},
        "offset": {"type": "integer", "description": "First line (default 1)."},
        "limit": {"type": "integer", "description": f"Lines (default {PIECE_LINES})."}}, "required": ["name", "path"]}

    def __init__(self, active: ActiveSkills):
        self.active = active

    def run(self, args: dict[str, Any]) -> ToolResult:
        skill = self.active.skills.get(str(args.get("name") or args.get("skill") or ""))
        path = str(args.get("path") or "")
        text = skill.read_resource(path, int(args.get("offset") or 1), int(args.get("limit") or PIECE_LINES))
        self.active.record({"stage": "skill_resource", "name": skill.name, "path": path})
        return ToolResult(text, summary=f"{skill.name}/{path}: {text.splitlines()[0].split(': ', 1)[-1]}", trusted=True)
