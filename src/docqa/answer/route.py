"""Routing and follow-ups: questions about the knowledge base itself, the question's language,
and turning a follow-up into a standalone question."""

from __future__ import annotations

import os
import re

from docqa.text.language import has_cjk, language_of  # noqa: F401  (language_of: callers import it from here)
from docqa.text.segment import query_terms
from docqa.types import DocumentRecord

_CATALOG = [
    re.compile(r"\b(what|which)\b[^?]{0,40}\b(files?|documents?|docs|sources|pdfs?)\b[^?]{0,40}\b(you|there|have|indexed|available|knowledge ?base|loaded|stored)\b", re.I),  # noqa: E501 - a pattern reads best whole
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


_AUX = frozenset("is are was were do does did can could will would should has have had may must".split())
_DO = frozenset("do does did".split())
_PARTICLES = frozenset("up down out off on in away back over".split())
_PARTICIPLE = re.compile(r"(?:ed|en|wn)$|^(?:kept|made|done|set|run|built|sent|held|put|read|found|got|cut|paid|sold|told|led|met)$",
                         re.IGNORECASE)
_PRONOUNS = frozenset("it its they them their this that these those he she him her".split())
_PRONOUN = re.compile(r"\b(?:they|them|it|these|those|its|their)\b|它们|它|其|这些|那些|这个|那个", re.IGNORECASE)
_ELLIPSIS = re.compile(r"^(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*[?？]?$|^(?:那么?)?(.+?)呢\s*[?？]?$", re.IGNORECASE)
_ZH_QUESTION = re.compile(r"哪|什么|谁|几|怎|何|多少|多久|多长|多大|是否|吗")

def _zh_subject(question: str, answer: str) -> str | None:
    head = question.strip().lstrip("《“\"「")
    m = _ZH_QUESTION.search(head)
    head = head[: m.start()] if m else head
    cut = _ZH_CUT.search(head, 2)  # the subject ends where its predicate starts: "暴鲤龙|是根据…"
    if cut:
        return head[: cut.start()].rstrip("》”\"」") or None
    head = _ZH_LINK.sub("", head)
    for end in range(min(len(head), 12), 1, -1):
        if head[:end] in answer:
            return _ZH_LINK.sub("", head[:end]).rstrip("》”\"」") or None
    terms = [t for t in query_terms(question) if not _ZH_QUESTION.search(t)]
    return terms[0] if terms else None


_ZH_CUT = re.compile(r"是|的|在|有|为|被|由|位于|分布|属于|开始|根据|主要|通常|又|还|也|叫|字|名称|名字|来自|如何|怎么|实行|》")
_ZH_LINK = re.compile(r"(?:是|的|在|有|为|被|由|位于|分布在?|属于|出生|这本书|这个)+$")

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
    """Without a model: the follow-up made standalone from the previous question.

    A pronoun ("they", "它们") becomes the previous question's subject ("How long are backups
    kept?" → "backups"); "what about logs?" / "那日志呢？" is the previous question with its subject
    swapped; otherwise the previous question's terms that the follow-up does not repeat are added."""
    before = previous.get("question", "")
    subject = previous_subject(before, previous.get("answer_summary", ""))
    if subject:
        if (other := _ELLIPSIS.match(question.strip())) and subject.lower() in before.lower():
            new = (other.group(1) or other.group(2)).strip()
            return re.sub(re.escape(subject), new, before, count=1, flags=re.IGNORECASE)
        standalone, replaced = _PRONOUN.subn(subject, question, count=1)
        if replaced:
            return standalone
    have = set(query_terms(question))
    extra = [t for t in query_terms(before) if t not in have]
    if not extra:
        return question
    return question.rstrip() + " " + " ".join(extra[:8])


def condensed_reply(reply: str, question: str, previous: dict) -> str | None:
    """The model's standalone question, or None when it cannot be used: empty, running on, or not
    resolving the follow-up — the follow-up leaned on the previous turn (a pronoun or "what about
    …"), and the rewrite adds no word of the previous question or answer (nor one sharing its first
    four letters) while it adds nothing at all or keeps a pronoun ("Who had it tried to defeat?"
    back unchanged; "它的属性是什么？").
    The caller then condenses without the model, which always carries the previous turn over."""
    lines = [line.strip().strip('"“”') for line in reply.strip().splitlines() if line.strip()]
    standalone = lines[0] if lines else ""
    if not standalone or len(standalone) > 4 * len(question) + 200:
        return None
    if _PRONOUN.search(question) or _ELLIPSIS.match(question.strip()):
        before = set(query_terms(f"{previous.get('question', '')} {previous.get('answer_summary', '')}"))
        added = set(query_terms(standalone)) - set(query_terms(question))
        linked = any(a == b or (len(a) >= 4 and a[:4] == b[:4]) for a in added for b in before)  # backups ~ backed
        if not linked and (not added or _PRONOUN.search(standalone)):
            return None
    return standalone


def previous_subject(question: str, answer: str = "") -> str | None:
    """What a question is about: the words between its auxiliary and its main verb ("How long are
    backups kept?" → "backups"; "How often does the scheduler run?" → "the scheduler"); for Chinese,
    its start up to where the predicate begins ("黑尾前肛鳗分布在什么地区？" → "黑尾前肛鳗"), else the
    longest start that the answer repeats, else its first term.  None when there is no such phrase."""
    if has_cjk(question):
        return _zh_subject(question, answer)
    words = re.findall(r"[\w.'-]+", question.rstrip("?？ "))
    aux = next((i for i, w in enumerate(words) if w.lower() in _AUX), None)
    if aux is None or aux + 1 >= len(words):
        return None
    phrase = words[aux + 1 :]
    wh = {w.lower() for w in words[:aux]}  # "and how often are …": the question word need not come first
    if len(phrase) >= 2 and (words[aux].lower() in _DO or wh & {"how", "where", "when", "why"}):
        while len(phrase) > 1 and phrase[-1].lower() in _PARTICLES:
            phrase = phrase[:-1]
        if len(phrase) > 1 and (words[aux].lower() in _DO or _PARTICIPLE.search(phrase[-1])):
            phrase = phrase[:-1]
    if not phrase or len(phrase) > 6 or phrase[0].lower() in _PRONOUNS:
        return None
    return " ".join(phrase)


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
