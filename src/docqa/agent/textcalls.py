"""Tool calls written as text: small local models (Qwen2.5 1.5B on llama.cpp, for one) answer a
tools request with the call as JSON in the message — in a ```json block, in <tool_call> tags, or
bare — instead of structured `tool_calls`.  This reads them back.

The same JSON written inside a document is data: `planted_calls` reads the calls a tool result
carries, and the loop never runs a call that repeats one of them (`is_planted`)."""

from __future__ import annotations

import json
import re

from docqa.llm.base import ToolCall

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>|```(?:json|tool_call)?\s*(.*?)```", re.DOTALL)


def text_tool_calls(text: str, names: set[str]) -> list[ToolCall]:
    """The tool calls written in `text` (only tools in `names`)."""
    candidates = [m.group(1) or m.group(2) for m in _BLOCK.finditer(text)]
    if not candidates and text.strip().startswith("{"):
        candidates = [text.strip()]
    return _calls(candidates, names)


def planted_calls(text: str, names: set[str]) -> list[tuple[str, dict]]:
    """Every tool call written anywhere in `text` (a tool result, a document): (name, arguments)."""
    out = []
    for call in _calls([text], names):
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            args = {}
        out.append((call.name, args if isinstance(args, dict) else {}))
    return out


def is_planted(call: ToolCall, planted: list[tuple[str, dict]]) -> bool:
    """True when `call` repeats one written in a document: the same tool, with the planted arguments
    among its own (a planted call without arguments: only the same call without arguments)."""
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return False
    if not isinstance(args, dict):
        return False
    return any(call.name == name and (all(args.get(k) == v for k, v in p_args.items()) if p_args else not args)
               for name, p_args in planted)


def _calls(candidates: list[str], names: set[str]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for raw in candidates:
        for obj in _objects(raw):
            function = obj.get("function")
            name = obj.get("name") or obj.get("tool") or (function.get("name") if isinstance(function, dict) else function)
            args = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
            if isinstance(function, dict) and not args:
                args = function.get("arguments", {})
            if isinstance(name, str) and name in names:
                arguments = args if isinstance(args, str) else json.dumps(args if isinstance(args, dict) else {}, ensure_ascii=False)
                calls.append(ToolCall(f"text_call_{len(calls)}", name, arguments))
    return calls


def _objects(raw: str) -> list[dict]:
    """JSON objects in `raw`: one object, a list of them, or several one after another."""
    raw = raw.strip()
    try:
        value = json.loads(raw)
        items = value if isinstance(value, list) else [value]
        return [v for v in items if isinstance(v, dict)]
    except ValueError:
        pass
    out, decoder, i = [], json.JSONDecoder(), 0
    while (start := raw.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(raw, start)
        except ValueError:
            i = start + 1
            continue
        if isinstance(value, dict):
            out.append(value)
        i = end
    return out
