"""The headings a sentence is read under (docqa.answer.headings) and the decision's coverage features that count them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import evidence_features, extract
from docqa.answer.headings import headings
from docqa.text.segment import query_terms
from .hits import hit_in, sources

TEXT = "Some text.\n"


def _hit(title: str, section: str, path: str):
    return replace(hit_in(TEXT, 0, len(TEXT), path=path, section=section), title=title)


# title, section path, file: the section paths as the readers record them for the trust corpus, SQuAD and CMRC
@pytest.mark.parametrize("title, section, path, expected", [
    # an HTML book: the page's own heading and the section it is cut from
    ("Valgrind Frequently Asked Questions", "Valgrind Frequently Asked Questions > 1. Background",
     "/doc/valgrind/html/faq.html", "Valgrind Frequently Asked Questions\n1. Background"),
    # a manual of one page: the chapters, not its title (which every passage of the manual shares)
    ("Debian Edu / Skolelinux Bullseye 11 手册", "28. 附件 C——旧发布版本中的特点 > 28.1.2. 软件更新",
     "/doc/debian-edu-doc-zh-cn/debian-edu-bullseye-manual.html", "28. 附件 C——旧发布版本中的特点\n28.1.2. 软件更新"),
    # a man page's section
    ("TAR(1)", "所有选项", "/man/zh_CN/man1/tar.1.gz", "所有选项"),
    # a SQuAD or CMRC paragraph under its article's title alone, and the file named after it
    ("Normans", "Normans", "/squad/docs/Normans.md", ""),
    ("Yuan dynasty", "Yuan dynasty", "/squad/docs/Yuan_dynasty.md", ""),
    ("DEV_350.md", "#", "/cmrc/docs/DEV_350.md", ""),  # an empty title line: no heading
    # a text without sections (release notes, a README.Debian)
    ("2.30.3.txt", "", "/doc/git/RelNotes/2.30.3.txt", ""),
    ("README.Debian", "", "/doc/ca-certificates/README.Debian", ""),
])
def test_the_headings_a_passage_is_read_under(title, section, path, expected):
    assert headings(_hit(title, section, path)) == expected


# question, the sentence that answers, the headings it sits under (trust dev set questions, real text)
FAQ = ("How is the name Valgrind supposed to be pronounced?",
       'The "grind" is pronounced with a short \'i\' -- ie. "grinned" (rhymes with "tinned") rather than "grined" '
       '(rhymes with "find").', "Valgrind Frequently Asked Questions\n1. Background")
ESR = ("Debian Edu 10 Buster 自带的 Firefox ESR 是哪个版本？", "Firefox 60.7 ESR 和 Chromium 73.0",
       "28. 附件 C——旧发布版本中的特点\n28.1. 2019 年 07 月 06 日发行的 Debian Edu 10+edu0 代号 Buster 的新特性\n28.1.2. 软件更新")


@pytest.mark.parametrize("question, sentence, under", [FAQ, ESR])
def test_the_headings_hold_the_question_for_the_sentence_under_them(question, sentence, under):
    terms = query_terms(question)
    weights = {t: 1.0 for t in terms}
    alone = evidence_features(question, sentence, sentence, terms, weights, 0.5, 0.6)
    read = evidence_features(question, sentence, sentence, terms, weights, 0.5, 0.6, under=under)
    assert alone["missing_name"] == 1.0 and read["missing_name"] == 0.0
    assert read["matched"] > alone["matched"]
    assert read["missing_rare"] <= alone["missing_rare"]
    # headings that name something else hold nothing for it
    other = evidence_features(question, sentence, sentence, terms, weights, 0.5, 0.6, under="3. Installation\n3.2. Disks")
    assert other == alone


# The FAQ's answer as the trust corpus holds it (valgrind/html/faq.html, 1.1).
PRONOUNCE = ('The "Val" as in the word "value". The "grind" is pronounced with a short \'i\' -- ie. "grinned" (rhymes '
             'with "tinned") rather than "grined" (rhymes with "find").\n\nDon\'t feel bad: almost everyone gets it wrong '
             "at first.\n")


def test_an_answer_under_a_heading_that_names_its_subject_is_read_under_it(hash_embedder, monkeypatch):
    """The same answer under the FAQ's section and under a title alone (one heading over the whole text, as a SQuAD
    article's): the coverage features read under the headings are recorded for both (`…_under`); the decision reads
    them only with HEADINGS on, and then finds the answer under the section more likely right."""
    def embed(texts, kind):
        return hash_embedder.embed_batch(texts, kind)

    def answer(section):
        hit = replace(hit_in(PRONOUNCE, 0, len(PRONOUNCE), path="/doc/valgrind/html/faq.html", section=section),
                      title="Valgrind Frequently Asked Questions")
        return extract(FAQ[0], sources(hit), {}, embed, threshold=0.0)

    sectioned, titled = answer("Valgrind Frequently Asked Questions > 1. Background"), answer("Valgrind Frequently Asked Questions")
    assert sectioned.chosen[0].text == titled.chosen[0].text
    assert sectioned.features["under_name"] == 1.0 and sectioned.features["under_matched"] >= 1.0
    assert titled.features["under_name"] == titled.features["under_matched"] == titled.features["under_rare"] == 0.0
    # off (the default): the decision is main's, whatever the headings
    assert sectioned.features["missing_name"] == titled.features["missing_name"] == 1.0
    assert sectioned.evidence == titled.evidence
    monkeypatch.setattr(extractive, "HEADINGS", True)
    read, plain = answer("Valgrind Frequently Asked Questions > 1. Background"), answer("Valgrind Frequently Asked Questions")
    assert read.features["missing_name"] == read.features["pick_missing_name"] == 0.0
    assert plain.features["missing_name"] == 1.0
    assert read.evidence > plain.evidence == titled.evidence
