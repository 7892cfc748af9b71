"""`ChatModel` over any OpenAI-compatible `/chat/completions` endpoint, with the `openai` client.

Ollama (`http://127.0.0.1:11434/v1`), llama.cpp server, vLLM, DashScope and OpenAI all speak it.
The client retries connection errors, 408/409/429 and 5xx with exponential backoff
(`max_retries`); every failure that is left becomes an `LLMError` naming the server and what to
do.  Streaming asks for usage in the last chunk (servers that ignore it report none).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from docqa.errors import LLMError
from docqa.llm.base import ChatModel, Delta, Message, ToolCall, Usage


class OpenAICompatModel(ChatModel):
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 120.0,
                 max_retries: int = 3, temperature: float = 0.2, max_tokens: int | None = None,
                 supports_tools: bool = True):
        import openai

        self.base_url, self.model = base_url.rstrip("/"), model
        self.name = model
        self.temperature, self.max_tokens = temperature, max_tokens
        self.supports_tools = supports_tools
        self._openai = openai
        self.timeout = timeout
        self._client = openai.OpenAI(base_url=self.base_url, api_key=api_key or "not-needed", timeout=timeout,
                                     max_retries=max_retries)

    def stream(self, messages: list[Message], tools: list[dict] | None = None, **options: Any) -> Iterator[Delta]:
        request: dict[str, Any] = {
            "model": self.model, "messages": [m.to_openai() for m in messages], "stream": True,
            "stream_options": {"include_usage": True}, "temperature": options.pop("temperature", self.temperature),
        }
        max_tokens = options.pop("max_tokens", self.max_tokens)
        if max_tokens:
            request["max_tokens"] = max_tokens
        if tools and self.supports_tools:
            request["tools"] = tools
        limit = options.pop("timeout", None)  # a run's time left: wait no longer than that for the reply
        client = self._client if limit is None else self._client.with_options(timeout=max(0.01, min(limit, self.timeout)))
        request.update(options)
        try:
            chunks = client.chat.completions.create(**request)
            yield from self._deltas(chunks)
        except self._openai.APITimeoutError as exc:
            raise LLMError(f"{self.base_url}: no answer from {self.model} in time ({exc}); raise the timeout or use a smaller model") from exc
        except self._openai.APIConnectionError as exc:
            raise LLMError(f"cannot reach the chat model at {self.base_url} ({exc}): check llm.base_url and that the server runs") from exc
        except self._openai.APIStatusError as exc:
            raise LLMError(f"{self.base_url} refused the request for {self.model}: {exc.status_code} {_short(exc)}") from exc
        except self._openai.OpenAIError as exc:  # a broken stream, an unreadable reply
            raise LLMError(f"{self.base_url}: the reply of {self.model} could not be read: {_short(exc)}") from exc

    def _deltas(self, chunks) -> Iterator[Delta]:
        pending: dict[int, dict[str, str]] = {}  # tool calls arrive in pieces, by index
        finish, first = None, True
        for chunk in chunks:
            if chunk.usage is not None:
                yield Delta(usage=Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0))
            for choice in chunk.choices or []:
                delta = choice.delta
                content = choice.logprobs.content if getattr(choice, "logprobs", None) is not None else None
                if first and content:  # asked with logprobs: the first token's alternatives (a chooser's verdict)
                    first = False
                    yield Delta(top={t.token: t.logprob for t in content[0].top_logprobs or []} or {content[0].token: content[0].logprob})
                if delta is not None and delta.content:
                    yield Delta(text=delta.content)
                for call in (delta.tool_calls if delta is not None else None) or []:
                    slot = pending.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function is not None:
                        slot["name"] += call.function.name or ""
                        slot["arguments"] += call.function.arguments or ""
                finish = choice.finish_reason or finish
        for index in sorted(pending):
            slot = pending[index]
            yield Delta(tool_call=ToolCall(slot["id"] or f"call_{index}", slot["name"], slot["arguments"]))
        yield Delta(finish_reason=finish)

    def close(self) -> None:
        self._client.close()


def _short(exc: Exception) -> str:
    body = getattr(exc, "body", None) or getattr(exc, "message", "") or str(exc)
    return str(body)[:300]
