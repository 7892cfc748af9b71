"""The agent's tools: thin wrappers over the knowledge base, each result size-capped with a note
on how to get more, every citable passage numbered as a source [n]."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docqa.answer.guard import neutral
from docqa.answer.sources import Source, SourceSet, location
from docqa.errors import DocqaError
from docqa.types import Hit


@dataclass(slots=True)
class ToolResult:
    content: str  # what the model reads
    terminate: bool = False  # the answer tool ends the loop
    summary: str = ""  # one line for front ends ("5 hits", "lines 1–200 of ops.md")
    error: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    trusted: bool = False  # the operator's own text (a skill's procedure), not a document's: not fenced as untrusted


class Tool(ABC):
    name: str
    description: str
    parameters: dict[str, Any]

    def spec(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}

    @abstractmethod
    def run(self, args: dict[str, Any]) -> ToolResult:
        """Run with the model's arguments; raise DocqaError / ValueError for a bad call."""


class Evidence:
    """Every passage the agent has seen, numbered as sources in order of first sight."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self._by_key: dict[str, int] = {}

    def number(self, hit: Hit) -> int:
        key = f"{hit.document_id}:{hit.char_start}:{hit.char_end}"
        if key not in self._by_key:
            self.sources.append(Source(len(self.sources) + 1, hit))
            self._by_key[key] = len(self.sources)
        return self._by_key[key]

    def source_set(self) -> SourceSet:
        return SourceSet(list(self.sources))


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


class SearchDocs(Tool):
    name = "search_docs"
    description = ("Search the documents (keywords and meaning, any language). Returns the best passages, each "
                   "numbered as a source [n] you can cite, with title, path, section, page, snippet and score.")
    parameters = _obj({"query": {"type": "string", "description": "What to look for."},
                       "collection": {"type": "string", "description": "Only this collection."},
                       "top_k": {"type": "integer", "description": "How many passages (default 5)."}}, ["query"])

    def __init__(self, search: Callable[..., list[Hit]], evidence: Evidence, top_k: int):
        self.search, self.evidence, self.top_k = search, evidence, top_k

    def run(self, args: dict[str, Any]) -> ToolResult:
        query = str(args.get("query") or "").strip()
        if not query:
            raise ValueError("query is required")
        top_k = max(1, min(int(args.get("top_k") or self.top_k), 20))
        collection = args.get("collection") or None
        hits = self.search(query, top_k, collection)
        head = ""
        if not hits and collection:  # models invent collection names ("all", "docs"): search what this run may
            hits = self.search(query, top_k, None)
            head = f"Nothing in a collection named {collection!r}; these are from the collections this question may use.\n\n" if hits else ""
        if not hits:
            return ToolResult(f"No passages match {query!r}. Try other words, or list_docs / grep_docs.", summary="0 hits")
        parts = []
        for hit in hits:
            n = self.evidence.number(hit)
            parts.append(f"[{n}] {location(hit)} (doc {hit.document_id}, score {hit.score:.2f})\n{neutral(hit.text.strip())}")
        low = getattr(hits, "low_relevance", False)
        head += "Low relevance: these may not answer it.\n\n" if low else ""
        return ToolResult(head + "\n\n".join(parts), summary=f"{len(hits)} hits for {query!r}{_reranked(hits)}",
                          data={"sources": [self.evidence.number(h) for h in hits]})


def _reranked(hits: Any) -> str:
    """What search.rerank did, for the tool result's summary (the run trace and its status event)."""
    report = getattr(hits, "rerank", None)
    if not report:
        return ""
    return "; reranked" if report["status"] == "reranked" else f"; not reranked ({report['reason']})"


class ListDocs(Tool):
    name = "list_docs"
    description = ("List the documents, one line each: - [folder / title](doc-id): summary. Filter with grep "
                   "(a pattern over path, title, keywords, summary); page through long lists.")
    parameters = _obj({"grep": {"type": "string"}, "page": {"type": "integer"}, "page_size": {"type": "integer"}}, [])

    def __init__(self, list_docs: Callable[..., Any]):
        self.list_docs = list_docs

    def run(self, args: dict[str, Any]) -> ToolResult:
        page = self.list_docs(args.get("grep") or None, int(args.get("page") or 1), int(args.get("page_size") or 50))
        return ToolResult(neutral(page.render()), summary=f"{len(page.lines)} of {page.total} documents")


class FetchDoc(Tool):
    name = "fetch_doc"
    description = ("Read a document by its doc-id (from list_docs or search_docs), with line numbers, "
                   "paged by offset (first line) and limit (lines). The text read is a source [n] you can cite.")
    parameters = _obj({"doc_id": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, ["doc_id"])

    def __init__(self, fetch: Callable[..., Any], passage: Callable[[str, int, int], Hit], evidence: Evidence):
        self.fetch, self.passage, self.evidence = fetch, passage, evidence

    def run(self, args: dict[str, Any]) -> ToolResult:
        doc_id = str(args.get("doc_id") or "").strip()
        if not doc_id:
            raise ValueError("doc_id is required")
        page = self.fetch(doc_id, int(args.get("offset") or 1), int(args.get("limit") or 200))
        if page.line_end < page.line_start:
            return ToolResult(page.render(), summary=f"{page.path}: nothing at line {page.line_start}")
        n = self.evidence.number(self.passage(page.doc_id, page.line_start, page.line_end))
        return ToolResult(f"Source [{n}]:\n{neutral(page.render())}", summary=f"lines {page.line_start}–{page.line_end} of {page.path}",
                          data={"sources": [n]})


class GrepDocs(Tool):
    name = "grep_docs"
    description = ("Find a regular expression in the text of every document, like ripgrep: path:line: text, with "
                   "context lines. Use it for exact names, numbers, error codes; then fetch_doc to read around a match.")
    parameters = _obj({"pattern": {"type": "string"}, "path_glob": {"type": "string"},
                       "context": {"type": "integer"}}, ["pattern"])

    def __init__(self, grep: Callable[..., Any]):
        self.grep = grep

    def run(self, args: dict[str, Any]) -> ToolResult:
        pattern = str(args.get("pattern") or "")
        if not pattern:
            raise ValueError("pattern is required")
        result = self.grep(pattern, args.get("path_glob") or None, max(0, min(int(args.get("context") or 1), 5)))
        return ToolResult(neutral(result.render()), summary=f"{result.total} matches for /{pattern}/")


class AnswerTool(Tool):
    name = "answer"
    description = ("Give the final answer and stop. Cite the sources after each claim as [n]. If the documents do "
                   "not contain the answer, say so.")
    parameters = _obj({"text": {"type": "string", "description": "The answer, with [n] after each claim."},
                       "citations": {"type": "array", "items": {"type": "integer"},
                                     "description": "The source numbers the answer rests on."}}, ["text"])

    def run(self, args: dict[str, Any]) -> ToolResult:
        text = str(args.get("text") or "").strip()
        if not text:
            raise ValueError("text is required: the answer itself")
        return ToolResult("Answer recorded.", terminate=True, summary="answered", data={"text": text})


def cap(result: ToolResult, limit: int, name: str) -> ToolResult:
    """Cut an oversized result, telling the model how to get the rest (one call never floods the context)."""
    if len(result.content) <= limit:
        return result
    cut = result.content.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    more = {"fetch_doc": "call fetch_doc with a later offset or a smaller limit",
            "list_docs": "use grep or a later page", "grep_docs": "narrow the pattern or use path_glob",
            "search_docs": "ask for fewer passages (top_k)"}.get(name, "ask for less")
    result.content = result.content[:cut] + f"\n[… cut at {limit} characters of {len(result.content)}: {more}]"
    return result


def parse_arguments(raw: str) -> dict[str, Any]:
    """The model's JSON arguments; a clear error for the model when they are not JSON."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc}); send a JSON object") from exc
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    return value


ToolError = (DocqaError, ValueError, TypeError)
