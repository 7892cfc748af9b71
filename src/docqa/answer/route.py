"""Routing and follow-ups: questions about the knowledge base itself, the question's language,
and turning a follow-up into a standalone question."""

from __future__ import annotations

import os
import re

from docqa.text.language import has_cjk, language_of  # noqa: F401  (language_of: callers import it from here)
from docqa.text.segment import query_terms
from docqa.types import DocumentRecord

_CATALOG = [
    re.compile(r"\b(what|which)\b[^?]{0,40}\b(files?|documents?|docs|sources|pdfs?)\b[^?]{0,40}\b(you|there|have|indexed|available|knowledge ?base|loaded|stored)\b", re.I),
    re.compile(r"^\s*(please\s+)?(list|show|enumerate)\b[^?]{0,20}\b(the\s+|all\s+|your\s+)*(files?|documents?|docs|sources)\b", re.I),
    re.compile(r"\bhow many (files|documents|docs)\b", re.I),
    re.compile(r"(有|存了|收录了?|包含)(哪些|什么|多少|几个)(文件|文档|资料)"),
    re.compile(r"(列出|列举|显示)(一下)?(所有|全部)?(的)?(文件|文档|资料)(列表|清单|名称|名字)?\s*[。？?！!]?\s*$"),
    re.compile(r"(知识库|库)里?(有|都有)(什么|哪些)"),
]
_FOLLOW_UP = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|he|she|him|her|there|the same|above|previous|more|else|also|instead)\b"
    r"|^(and|but|what about|how about|why|so)\b|它|它们|这个|那个|这些|那些|其|该|他|她|上面|上述|刚才|那么|呢[？?]?$",
    re.I,
)


_EXPLORE = re.compile(
    r"\b(list|compare|comparison|contrast|differences?|summari[sz]e|summary|overview|across|explore|find all|every|"
    r"each (?:file|document|doc)|all (?:the )?(?:files|documents|docs)|which (?:files|documents|docs))\b"
    r"|列出|列举|比较|对比|区别|异同|总结|概括|汇总|综述|所有(?:文件|文档)|哪些(?:文件|文档)|每个(?:文件|文档)|各个",
    re.I,
)


def wants_exploration(question: str) -> bool:
    """The question asks to explore: list, compare, summarise across files (agent mode's strength)."""
    return _EXPLORE.search(question) is not None


def is_catalog_question(question: str) -> bool:
    """A question about the knowledge base itself ("what files do you have?")."""
    return any(p.search(question) for p in _CATALOG)


def looks_like_follow_up(question: str) -> bool:
    """Short, or leaning on the previous turn ("what about it?", "那它呢")."""
    words = question.split() if not has_cjk(question) else list(question)
    return len(words) <= (8 if has_cjk(question) else 5) or _FOLLOW_UP.search(question) is not None


def condense_heuristic(question: str, previous: dict) -> str:
    """Without a model: the follow-up plus the previous question's terms it does not repeat."""
    have = set(query_terms(question))
    extra = [t for t in query_terms(previous.get("question", "")) if t not in have]
    if not extra:
        return question
    return question.rstrip() + " " + " ".join(extra[:8])


def catalog_answer(records: list[DocumentRecord], language: str, collection: str | None, limit: int = 50) -> str:
    """The knowledge base's document list as an answer."""
    ok = [r for r in records if r.status == "ok"]
    failed = [r for r in records if r.status != "ok"]
    where = collection or ("所有集合" if language == "zh" else "all collections")
    if not ok:
        return ("知识库（{w}）中还没有文档：用 'docqa add 文件夹' 添加。" if language == "zh"
                else "The knowledge base ({w}) holds no documents yet: add some with 'docqa add FOLDER'.").format(w=where)
    head = (f"知识库（{where}）中有 {len(ok)} 个文档：" if language == "zh"
            else f"The knowledge base ({where}) holds {len(ok)} document{'s' if len(ok) != 1 else ''}:")
    lines = [head]
    for r in sorted(ok, key=lambda r: r.path)[:limit]:
        summary = f" — {r.title}" if r.title and r.title != os.path.basename(r.path) else ""
        lines.append(f"- {os.path.basename(r.path)} ({r.type}, {r.chunks} chunks){summary}")
    if len(ok) > limit:
        lines.append(f"… 另有 {len(ok) - limit} 个" if language == "zh" else f"… and {len(ok) - limit} more")
    if failed:
        lines.append(f"另有 {len(failed)} 个文件未能索引（见 'docqa list'）。" if language == "zh"
                     else f"{len(failed)} more file(s) could not be indexed (see 'docqa list').")
    return "\n".join(lines)


def not_found_answer(language: str, query: str, collection: str | None, documents: int, near: list[str]) -> str:
    """Says, in the question's language, that the documents do not hold the answer and what was searched."""
    names = list(dict.fromkeys(os.path.basename(p) for p in near))[:3]
    if language == "zh":
        scope = f"集合 {collection}" if collection else "所有集合"
        text = f"文档中没有找到这个问题的答案。已检索：“{query}”（{scope}，共 {documents} 个文档）"
        return text + (f"；最接近的内容来自：{'、'.join(names)}。" if names else "。")
    scope = f"collection {collection}" if collection else "all collections"
    text = f"The documents do not contain an answer to this question. Searched for “{query}” in {scope} ({documents} document{'s' if documents != 1 else ''})"
    return text + (f"; the closest passages were in {', '.join(names)}." if names else ".")
