"""Chat models: one interface, one OpenAI-compatible implementation (Ollama, llama.cpp, vLLM, DashScope, OpenAI)."""

from docqa.llm.base import ChatModel, ChatResult, Delta, Message, ToolCall, Usage
from docqa.llm.factory import Choice, choose_chat_model, ollama_models
from docqa.llm.openai_compat import OpenAICompatModel

__all__ = ["ChatModel", "ChatResult", "Choice", "Delta", "Message", "OpenAICompatModel", "ToolCall", "Usage",
           "choose_chat_model", "ollama_models"]
