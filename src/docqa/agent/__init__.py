"""Agent mode: the model explores the knowledge base with tools (search, list, fetch, grep) and answers."""

from docqa.agent.loop import AgentLoop
from docqa.agent.tools import Tool, ToolResult

__all__ = ["AgentLoop", "Tool", "ToolResult"]
