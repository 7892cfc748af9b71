"""A small model's words for a question the documents did not answer as asked: one more search with them.

The chooser (docqa.answer.choose) only picks among sentences the extractive answerer already read; most dev false
abstentions have no right sentence among them (benchmarks/RESULTS.md, 2026-12-06, "the model where retrieval
loses").  Two causes are the question's own words: a question in the other language than the documents (a Chinese
question over an English README: full-text search matches nothing, the answer's passage is found by meaning or not
at all), and a paraphrase (the documentation says `--max-depth`, the question "not deeper than the first level").
So when the extractive answerer abstains (on a question of one part), a small model is asked once, in a short call
at temperature 0:

- one of the HITS best passages is in the other language than the question (a mixed collection): for the question
  translated into that language (names, commands and numbers kept), which is then searched and answered from as it
  stands (the documents' language throughout);
- else: for a short query of the words the documentation would use (commands, options, file names, terms), which is
  searched together with the question and answered from with both.

Off as shipped (ASK): measured on the dev split with the 1.5B it took back none of 26 false abstentions (what the
new words found was either no better, or not backed by the model, which is a weak judge) for one more call on every
abstention.  The extractive answerer then reads the new passages with the new query.  Its answer replaces the first abstention
when it answers, or abstains with more evidence (`better`), and then only as an abstention the chooser may take back
(docqa.answer.choose.rescues): the model must back one of its sentences, because words that find another passage
find one that the evidence model accepts too often (dev: the first two such answers were both wrong).  Otherwise
the first abstention stands as before.  The model's words are never published: they only choose what is read.
"""

from __future__ import annotations

import re

from docqa.answer.extractive import Extract
from docqa.llm.base import Message

ASK = False  # ask a small model for its words when the extractive answerer abstains (with answer.choose_sentence); off:
# on the dev split's 26 false abstentions it gained none (RESULTS.md, 2026-12-06, "the 1.5B where retrieval loses")
MAX_TOKENS = 40  # a translated question or a query of a few words
MAX_CHARS = 300  # a longer reply is prose, not a query
NAMES = {"en": "English", "zh": "Chinese"}
RESCUE = True  # an abstention over the model's words with more evidence than the first one's replaces it
HITS = 5  # passages whose language is looked at: one in the other language makes the query a translation

TRANSLATE = """You translate a question into {language} for a search engine over documentation written in {language}.
Keep names, commands, options, file names and numbers exactly as they are.
Reply with the translated question only."""

TERMS = """You write search queries for a documentation search engine.
Given a question, reply with one short query (3 to 8 words) made of the words the documentation itself would use to
state the answer: command names, options, file names, technical terms.
Reply with the query only, in {language}."""

_LABEL = re.compile(r"^\W*(?:query|search query|translation|translated question|查询|问题)\s*[:：]\s*", re.IGNORECASE)
_QUOTES = "\"'`“”‘’「」"


def documents_language(question_language: str, hits: list[str]) -> str:
    """The language to search in: the other language when any of the best HITS passages (their languages, best
    first) is written in it (a mixed collection: the answer may be in either, and the question's own words already
    found what its language holds), else the question's."""
    return next((x for x in hits[:HITS] if x != question_language), question_language)


def translates(question_language: str, documents_language: str) -> bool:
    """Whether the model is asked for a translation (the documents are in the other language) or for terms."""
    return question_language != documents_language


def messages(question: str, question_language: str, documents_language: str) -> list[Message]:
    """The prompt: fixed instructions for the documents' language, then the question."""
    language = NAMES.get(documents_language, "English")
    if translates(question_language, documents_language):
        return [Message("system", TRANSLATE.format(language=language)),
                Message("user", f"Question: {question}\nThe question in {language}:")]
    return [Message("system", TERMS.format(language=language)),
            Message("user", f"Question: {question}\nThe query, in {language}:")]


def read(text: str) -> str | None:
    """The reply's first line, without a label ("Query:") or the quotes around it; None when it has no word or is prose."""
    line = next((x.strip() for x in text.strip().splitlines() if x.strip()), "")
    line = _LABEL.sub("", line).strip()
    if len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
        line = line[1:-1].strip()
    return line if re.search(r"\w", line) and len(line) <= MAX_CHARS else None


def query(question: str, reply: str, translated: bool) -> str | None:
    """What is searched and answered from: the translated question, or the question with the model's terms; None
    when the reply is unreadable or says nothing new."""
    words = read(reply)
    if words is None or words.casefold() == question.strip().casefold():
        return None
    return words if translated else f"{question} {words}"


def better(again: Extract, first: Extract) -> bool:
    """Whether the answer over the model's words replaces the first one (which abstained): it answers, or, with
    RESCUE its abstention has more evidence than the first's (the chooser's rescue then reads its sentences)."""
    return not again.abstained or (RESCUE and again.evidence > first.evidence)
