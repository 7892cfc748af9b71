"""Chat models: one interface, one OpenAI-compatible implementation (Ollama, llama.cpp, vLLM, DashScope, OpenAI),
the choice among them (factory), and the small local model docqa installs and serves itself (local, server)."""

from docqa.llm.base import ChatModel, ChatResult, Delta, Message, ToolCall, Usage
from docqa.llm.factory import Choice, best_ollama_model, choose_chat_model, ollama_models
from docqa.llm.openai_compat import OpenAICompatModel

__all__ = ["ChatModel", "ChatResult", "Choice", "Delta", "Message", "OpenAICompatModel", "ToolCall", "Usage",
           "best_ollama_model", "choose_chat_model", "ollama_models"]
