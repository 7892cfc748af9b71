"""Agent mode: the model explores the knowledge base with tools (search, list, fetch, grep) and answers."""

from docqa.agent.loop import AgentLoop, Control, Library
from docqa.agent.tools import Tool, ToolResult

__all__ = ["AgentLoop", "Control", "Library", "Tool", "ToolResult"]
