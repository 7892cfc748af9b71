"""An option's label is the subject of every sentence of its description (docqa.answer.defined), on the text the
readers make of real definition lists: a DocBook HTML manual's <dt>/<dd> and a man page's option paragraphs."""

from __future__ import annotations

import pytest

from docqa.answer import defined, extractive
from docqa.answer.extractive import _candidates, selection_features

from .hits import hit_in, sources

# valgrind's mc-manual.html (DocBook <dl class="variablelist">), as the HTML reader lays it out
MANUAL = """4.3. Memcheck Command-Line Options

--leak-check=<no|summary|yes|full> [default: summary]

When enabled, search for memory leaks when the client program finishes. If set to summary, it says how many leaks \
occurred. If set to full or yes, each individual leak will be shown in detail and/or counted as an error.

If --xml=yes is given, memcheck will automatically use the value --leak-check=full.

--leak-resolution=<low|med|high> [default: high]

When doing leak checking, determines how willing Memcheck is to consider different backtraces to be the same.

Note that the --leak-resolution setting does not affect Memcheck's ability to find leaks.
"""

# bzip2(1) as the man page reader lays it out: the label line, its description right under it
MAN_PAGE = """OPTIONS

-c --stdout
Compress or decompress to standard output.

-s --small
Reduce memory usage, for compression, decompression and testing. Files can be decompressed in 2300k of memory.

During compression, -s selects a block size of 200k, which limits memory use to around the same figure.

-q --quiet
Suppress non-essential warning messages.
"""


def _block_of(text: str, sentence: str) -> str:
    start = text.index(sentence)
    found = defined.block_at(defined.blocks(text), start, start + len(sentence))
    return found.label if found else ""


@pytest.mark.parametrize(("text", "sentence", "label"), [
    (MANUAL, "If set to summary, it says how many leaks occurred.", "--leak-check=<no|summary|yes|full> [default: summary]"),
    (MANUAL, "If --xml=yes is given, memcheck", "--leak-check=<no|summary|yes|full> [default: summary]"),  # its second <p>
    (MANUAL, "Note that the --leak-resolution setting", "--leak-resolution=<low|med|high> [default: high]"),
    (MANUAL, "--leak-check=<no|summary|yes|full> [default: summary]\n\nWhen enabled", ""),  # holds its label: none
    (MANUAL, "Memcheck Command-Line Options", ""),  # the heading above the list
    (MAN_PAGE, "Files can be decompressed in 2300k of memory.", "-s --small"),
    (MAN_PAGE, "During compression, -s selects a block size", "-s --small"),
    (MAN_PAGE, "Suppress non-essential warning messages.", "-q --quiet"),
])
def test_a_sentence_of_a_description_is_about_its_option(text, sentence, label):
    assert _block_of(text, sentence) == label


def test_a_label_inside_a_paragraph_opens_no_block():
    text = "Run it with\n--verbose\nto see each step.\n\nIt prints more."
    assert defined.blocks(text) == []


def test_a_long_description_ends_after_a_few_paragraphs():
    text = "--jobs=N\n\n" + "\n\n".join(f"Paragraph {i} says something." for i in range(8))
    assert _block_of(text, "Paragraph 2 says") == "--jobs=N"
    assert _block_of(text, "Paragraph 6 says") == ""  # the list is over: a later section's prose


def test_only_the_option_the_question_names_gives_its_blocks():
    found = defined.blocks(MANUAL)
    assert [b.label for b in defined.named("The quick start says --leak-check=yes; what if I leave it out?", found)] == [
        "--leak-check=<no|summary|yes|full> [default: summary]"]
    assert defined.named("How are leaks reported?", found) == []


def test_a_later_sentence_of_the_named_option_holds_its_name():
    """"If set to summary, it says ..." never repeats the option: read under its label, it holds the question's exact
    token and its terms, as the first sentence (quoted with the label) does."""
    question = "The quick start tells me to pass --leak-check=yes. What would Memcheck report about leaks if I left that option out?"
    found = sources(hit_in(MANUAL, 0, len(MANUAL), path="/kb/mc-manual.html", section="4.3. Memcheck Command-Line Options",
                           type_="html"))
    candidates = _candidates(found, 1, question)
    target = next(s for s in candidates if s.text.startswith("If set to summary"))
    other = next(s for s in candidates if "Note that the --leak-resolution" in s.text)  # its short description, read whole
    assert target.term.startswith("--leak-check=") and other.term == ""
    weights = {"leak-check": 5.0, "leaks": 2.0, "report": 1.0}
    given = extractive._exact_given(question, found)
    features = dict(zip((id(s) for s in candidates), selection_features(question, candidates, found, weights, given)))
    assert features[id(target)]["exact_paragraph"] == 1.0
    assert features[id(target)]["heading"] > features[id(other)]["heading"]
