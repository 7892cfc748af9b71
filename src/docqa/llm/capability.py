"""What a chat model can be trusted with: calling tools, and a long prompt.

The rule (`declare`), from the model's name unless `llm.tool_calling` says otherwise:

- the parameter count is read from the name (`qwen2.5-coder-1.5b`, `Qwen2.5-7B-Instruct`,
  `llama3.2:3b`); a model under 7B parameters is **small**;
- a small model does **not** call tools reliably: measured on Qwen2.5-Coder-1.5B (the local model of
  `docqa model install`), which writes its tool calls as JSON text and answered none of the agent's
  questions better than the pipeline (benchmarks/model_answers.py, RESULTS.md), so `answer.mode:
  auto` never gives it the agent, and its prompts hold fewer, shorter sources;
- a model whose size the name does not tell (gpt-4o-mini, deepseek-chat) is taken to be large.

`llm.tool_calling: reliable | unreliable` overrides the guess for tools.
"""

from __future__ import annotations

import re

from docqa.llm.base import ChatModel

SMALL_PARAMETERS = 7e9
_SIZE = re.compile(r"(?:^|[-_:/ .])(\d+(?:\.\d+)?)\s*([bm])(?=$|[-_:/ .])", re.IGNORECASE)


def parameters(name: str) -> float | None:
    """The parameter count a model's name states ('…-1.5b' → 1.5e9), or None."""
    found = _SIZE.findall(name or "")
    if not found:
        return None
    number, unit = found[-1]
    return float(number) * (1e9 if unit.lower() == "b" else 1e6)


def is_small(name: str) -> bool:
    size = parameters(name)
    return size is not None and size < SMALL_PARAMETERS


def declare(model: ChatModel | None, tool_calling: str = "auto") -> None:
    """Set `model.small` and `model.reliable_tools` by the rule above."""
    if model is None:
        return
    model.small = is_small(model.name)
    if tool_calling == "auto":
        model.reliable_tools = model.supports_tools and not model.small
    else:
        model.reliable_tools = model.supports_tools and tool_calling == "reliable"
