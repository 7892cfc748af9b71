"""MCP prompts: "ask with citations", "summarise a collection", "compare two documents", and each of the
agent's skills (docqa.skills) as a prompt of its own, written for the MCP tools.

A skill's procedure names the agent's tools (`list_docs`, …); a prompt names the MCP tools instead
(`mcp_words`), as do the errors and notes the MCP server passes on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_types import GetPromptResult, Prompt, PromptArgument, PromptMessage, TextContent

from docqa.errors import InputError, NotFoundError

# the agent's tool → the MCP tool that does the same (the others have the same name on both)
MCP_TOOLS = {"list_docs": "list_knowledge"}
_AGENT_NAMES = re.compile(r"\b(" + "|".join(map(re.escape, MCP_TOOLS)) + r")\b")
SKILL_PREFIX = "skill_"
CITING = ("Cite every claim with a numbered marker [n] after it, and end with a Sources list giving, for each n, the "
          "document's path, section or page, lines and the exact words quoted (search_docs and fetch_doc give them). "
          "Say so plainly when the documents do not hold the answer; never answer from memory.")


def mcp_words(text: str) -> str:
    """`text` with the agent's tool names replaced by the MCP tools' (`list_docs` → `list_knowledge`)."""
    return _AGENT_NAMES.sub(lambda m: MCP_TOOLS[m.group(1)], text)


@dataclass(frozen=True, slots=True)
class SkillText:
    """What a skill prompt needs of a skill (docqa.skills.Skill): its name, description and procedure."""

    name: str
    description: str
    body: str


def _arg(name: str, description: str, required: bool = True) -> PromptArgument:
    return PromptArgument(name=name, description=description, required=required)


FIXED = [
    Prompt(name="ask_with_citations", title="Ask with citations",
           description="Ask the documents a question; the answer is checked against them and cites file, section, page and lines.",
           arguments=[_arg("question", "The question, in any language."),
                      _arg("collection", "Only this collection (default: every collection you may read).", False)]),
    Prompt(name="summarise_collection", title="Summarise a collection",
           description="What a collection holds: each document's topic in a line, what they share, a citation per document.",
           arguments=[_arg("collection", "The collection to summarise (list_knowledge shows them).")]),
    Prompt(name="compare_documents", title="Compare two documents",
           description="What was added, removed or changed between two documents (or two versions of one), citing both.",
           arguments=[_arg("first", "The first document: a doc-id from list_knowledge, or the end of its path."),
                      _arg("second", "The second document, the same way."),
                      _arg("focus", "Only this part or aspect (default: the whole documents).", False)]),
]


def listing(skills: Sequence[SkillText]) -> list[Prompt]:
    """The fixed prompts, then one per skill."""
    return FIXED + [Prompt(name=SKILL_PREFIX + s.name, title=f"Skill: {s.name}", description=s.description,
                           arguments=[_arg("question", "What to do, in the skill's terms.")]) for s in skills]


def render(name: str, arguments: dict[str, str] | None, skills: Sequence[SkillText]) -> GetPromptResult:
    """The prompt's message for these arguments (InputError for a missing one, NotFoundError for no such prompt)."""
    args = {k: v.strip() for k, v in (arguments or {}).items() if isinstance(v, str) and v.strip()}
    by_name = {s.name: s for s in skills}
    if name == "ask_with_citations":
        where = f" in the collection {need(args, 'collection', name)!r}" if "collection" in args else ""
        text = (f"Answer this question from my documents{where}: {need(args, 'question', name)}\n\n"
                f"Call query_knowledge with the question{' and the collection' if where else ''}. Give its answer as it "
                "is, with its [n] markers, then a Sources list from its citations (path, section, page, lines, quote). "
                "If it says the documents do not hold the answer (answerable is false), say that; do not answer from memory.")
    elif name == "summarise_collection":
        text = _procedure(f"Summarise the collection {need(args, 'collection', name)!r} of my documents.",
                          by_name.get("summarise-collection"))
    elif name == "compare_documents":
        focus = f", as to {args['focus']}" if "focus" in args else ""
        text = _procedure(f"Compare the documents {need(args, 'first', name)!r} and {need(args, 'second', name)!r}{focus}: "
                          "what was added, removed or changed.", by_name.get("compare-versions"))
    elif name.startswith(SKILL_PREFIX) and name[len(SKILL_PREFIX):] in by_name:
        text = _procedure(need(args, "question", name), by_name[name[len(SKILL_PREFIX):]])
    else:
        there = ", ".join(p.name for p in listing(skills))
        raise NotFoundError(f"no prompt {name!r}; the prompts are: {there}")
    return GetPromptResult(description=next(p.description for p in listing(skills) if p.name == name),
                           messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))])


def _procedure(task: str, skill: SkillText | None) -> str:
    """A task, the skill's procedure written for the MCP tools, and how to cite."""
    steps = (f"\n\nFollow this procedure (docqa's {skill.name} skill):\n\n{mcp_words(skill.body).strip()}"
             if skill is not None else
             "\n\nFind the documents with list_knowledge, read them with fetch_doc, search passages with search_docs.")
    return f"{task}{steps}\n\n{CITING}"


def need(args: dict[str, str], key: str, prompt: str) -> str:
    if key not in args:
        raise InputError(f"the prompt {prompt} needs the argument {key!r}")
    return args[key]


__all__ = ["FIXED", "MCP_TOOLS", "SkillText", "listing", "mcp_words", "render"]
