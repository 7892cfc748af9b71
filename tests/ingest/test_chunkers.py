"""Chunkers per strategy on hand-made Documents (the helpers here are shared with the
property tests): sections, prose, overlap, pages, slides, sheets, code, limits."""

from __future__ import annotations

import re

import pytest

from docqa.ingest.chunkers import (
    CodeChunker, LineChunker, PageChunker, ProseChunker, RowChunker, SectionChunker,
    chunk_document, chunker_for,
)
from docqa.text import count_tokens
from docqa.types import HEADER_ROW, HEADING, PAGE, ROW, Block, Chunk, Document


# --- builders and invariants (also used by test_chunk_properties) ---

def markdown_doc(text: str, path: str = "doc.md") -> Document:
    """A Markdown Document with HEADING blocks as the reader makes them (fences skipped)."""
    blocks, fenced = [], False
    for m in re.finditer(r"^(```.*|#{1,6} .*)$", text, re.M):
        if m.group().startswith("```"):
            fenced = not fenced
        elif not fenced:
            level = len(m.group()) - len(m.group().lstrip("#"))
            blocks.append(Block(m.start(), m.end(), HEADING, level=level))
    return Document(path, "markdown", text, blocks=blocks)


def paged_doc(pages: list[str], type: str = "pdf") -> Document:
    """Pages joined by a blank line, one PAGE block per page."""
    text, blocks = "", []
    for number, page in enumerate(pages, 1):
        if number > 1:
            text += "\n\n"
        blocks.append(Block(len(text), len(text) + len(page), PAGE, page=number))
        text += page
    return Document(f"doc.{type}", type, text, blocks=blocks)


def sheet_doc(sheets: dict[str, list[str]], type: str = "xlsx") -> Document:
    """Each sheet: a heading line with its name, then a header row and data rows."""
    text, blocks = "", []
    for name, rows in sheets.items():
        if text:
            text += "\n\n"
        blocks.append(Block(len(text), len(text) + len(name), HEADING, level=1, sheet=name))
        text += name
        for i, row in enumerate(rows):
            text += "\n"
            kind = HEADER_ROW if i == 0 else ROW
            blocks.append(Block(len(text), len(text) + len(row), kind, sheet=name, row=i + 1))
            text += row
    return Document(f"book.{type}", type, text, blocks=blocks)


def check(document: Document, chunks: list[Chunk], max_tokens: int) -> None:
    """The invariants every chunker's output satisfies."""
    text = document.text
    if text.strip():
        assert chunks, "a non-empty document yields at least one chunk"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    reach = 0
    for c in chunks:
        assert c.text == text[c.char_start : c.char_end]
        assert c.text.strip(), "no whitespace-only chunks"
        assert not text[reach : c.char_start].strip(), f"text lost before chunk {c.ordinal}"
        reach = max(reach, c.char_end)
        assert c.tokens <= max_tokens
        assert count_tokens(c.text) <= max_tokens, (count_tokens(c.text), c.text[:80])
        assert c.line_start == text.count("\n", 0, c.char_start) + 1
        assert c.line_end == text.count("\n", 0, c.char_end - 1) + 1
    assert not text[reach:].strip(), "text lost after the last chunk"
    assert [c.char_start for c in chunks] == sorted(c.char_start for c in chunks)


def run(document: Document, max_tokens: int = 512, overlap: int = 50) -> list[Chunk]:
    chunks = chunk_document(document, max_tokens, overlap)
    check(document, chunks, max_tokens)
    return chunks


ENGLISH = "The index stores every chunk with its exact span. "
CHINESE = "本地优先的文档问答系统会给出精确引用。它还支持中文！真的吗？是的。"


# --- registry ---

@pytest.mark.parametrize(("doc_type", "chunker"), [
    ("markdown", SectionChunker), ("html", SectionChunker), ("docx", SectionChunker),
    ("pdf", PageChunker), ("pptx", PageChunker), ("csv", RowChunker), ("xlsx", RowChunker),
    ("code", CodeChunker), ("json", LineChunker), ("yaml", LineChunker),
    ("text", ProseChunker), ("rtf", ProseChunker), ("unheard-of", ProseChunker),
])
def test_registry_picks_by_type(doc_type, chunker):
    assert type(chunker_for(Document("x", doc_type, "x"))) is chunker


@pytest.mark.parametrize("text", ["", "   \n\n \t "])
def test_blank_documents_yield_nothing(text):
    assert chunk_document(Document("x", "text", text)) == []


# --- sections ---

@pytest.mark.parametrize(("text", "sections"), [
    ("# Install\n\nRun pip.\n\n## Database\n\nUse SQLite.\n\n# Usage\n\nAsk.\n",
     [("Install",), ("Install", "Database"), ("Usage",)]),
    ("Preamble text.\n\n# A\n\nBody A.\n\n### A3\n\nDeep.\n\n## B2\n\nSecond.\n",
     [(), ("A",), ("A", "A3"), ("A", "B2")]),
    # A section that is only a heading joins the next one.
    ("# Install\n\n## Database\n\nUse SQLite.\n", [("Install", "Database")]),
    ("# Title #\n\nText.\n", [("Title",)]),
])
def test_markdown_section_paths(text, sections):
    chunks = run(markdown_doc(text))
    assert [c.section for c in chunks] == sections
    assert chunks[0].text.startswith(text.lstrip()[:3])


def test_section_that_fits_is_one_chunk_with_its_heading():
    text = "# Guide\n\nintro\n\n## Setup\n\n" + "Install it first. " * 10 + "\n\nThen run it.\n"
    chunks = run(markdown_doc(text))
    assert chunks[1].text.startswith("## Setup") and chunks[1].text.endswith("Then run it.")


def test_long_section_split_keeps_path_and_no_overlap_across_headings():
    body = "\n\n".join(ENGLISH * 6 for _ in range(12))
    text = f"# Top\n\n## Long\n\n{body}\n\n## Next\n\nShort tail.\n"
    chunks = run(markdown_doc(text), max_tokens=128, overlap=20)
    long = [c for c in chunks if c.section == ("Top", "Long")]
    assert len(long) > 3
    nxt = next(c for c in chunks if c.section == ("Top", "Next"))
    assert nxt.char_start == text.index("## Next"), "no overlap across a heading"


def test_fenced_code_is_not_split_mid_fence():
    fence = "```python\n" + "\n\n".join(f"def f{i}():\n    return {i}" for i in range(12)) + "\n```"
    text = "# Code\n\n" + ENGLISH * 8 + "\n\n" + fence + "\n\n" + ENGLISH * 8 + "\n"
    chunks = run(markdown_doc(text), max_tokens=160, overlap=0)
    start = text.index("```python")
    assert any(c.char_start <= start and c.char_end >= start + len(fence) for c in chunks)


# --- prose ---

def test_short_paragraphs_are_merged():
    text = "\n\n".join(f"Paragraph number {i} is short." for i in range(8))
    chunks = run(Document("a.txt", "text", text))
    assert len(chunks) == 1 and chunks[0].text == text


@pytest.mark.parametrize(("paragraph", "marks"), [
    (CHINESE * 40, "。！？"),
    ("".join(f"Sentence number {i} says something useful! Is it true? Yes. " for i in range(60)), ".!?"),
])
def test_long_paragraph_splits_at_sentence_ends(paragraph, marks):
    chunks = run(Document("a.txt", "text", paragraph), max_tokens=64, overlap=0)
    assert len(chunks) > 3
    assert all(c.text[-1] in marks for c in chunks)
    if "。" in marks:
        assert all(c.language == "zh" for c in chunks)


def test_sentence_longer_than_limit_is_cut_at_tokens():
    text = "x" * 5 + "数据库" * 400 + "end"
    chunks = run(Document("a.txt", "text", text), max_tokens=64, overlap=10)
    assert len(chunks) > 5


@pytest.mark.parametrize("overlap", [10, 30])
def test_overlap_present_and_bounded(overlap):
    text = "\n\n".join(ENGLISH * 4 + f"Closing remark number {i}." for i in range(20))
    chunks = run(Document("a.txt", "text", text), max_tokens=100, overlap=overlap)
    assert len(chunks) > 4
    for a, b in zip(chunks, chunks[1:]):
        assert b.char_start < a.char_end, "consecutive chunks overlap"
        shared = text[b.char_start : a.char_end]
        assert 0 < count_tokens(shared) <= overlap + 1
        assert not text[b.char_start - 1].isalnum(), "overlap starts at a word boundary"


def test_zero_overlap_means_disjoint_chunks():
    text = "\n\n".join(ENGLISH * 4 for _ in range(20))
    chunks = run(Document("a.txt", "text", text), max_tokens=100, overlap=0)
    assert all(b.char_start >= a.char_end for a, b in zip(chunks, chunks[1:]))


@pytest.mark.parametrize("max_tokens", [16, 64, 200, 1000])
def test_configurable_limits(max_tokens):
    text = "\n\n".join((ENGLISH * 3 + CHINESE) * (i % 4 + 1) for i in range(30))
    chunks = run(Document("a.txt", "text", text), max_tokens=max_tokens, overlap=max_tokens // 4)
    assert max(c.tokens for c in chunks) > max_tokens * 0.6


def test_line_numbers():
    text = "first line\nsecond line\n\nthird para\nmore\n"
    chunks = run(Document("a.txt", "text", text), max_tokens=16, overlap=0)
    assert (chunks[0].line_start, chunks[-1].line_end) == (1, 5)


@pytest.mark.parametrize("type", ["json", "yaml"])
def test_json_and_yaml_without_blank_lines_fall_back_to_lines(type):
    text = "\n".join(f'  "key_{i}": "value number {i}",' for i in range(200))
    chunks = run(Document(f"a.{type}", type, "{\n" + text + "\n}\n"), max_tokens=64, overlap=0)
    assert len(chunks) > 5
    assert all(c.text.endswith((",", "}")) for c in chunks)


# --- pages and slides ---

def test_pdf_chunks_stay_on_their_page():
    pages = ["Short page one.", "\n\n".join(ENGLISH * 5 for _ in range(10)), "Page three.", "Four."]
    doc = paged_doc(pages)
    chunks = run(doc, max_tokens=100, overlap=20)
    assert all(c.page_start == c.page_end for c in chunks)
    assert [c.page_start for c in chunks][0] == 1 and chunks[-1].page_start == 4
    by_page = {p: [c for c in chunks if c.page_start == p] for p in range(1, 5)}
    assert len(by_page[1]) == len(by_page[3]) == len(by_page[4]) == 1, "small pages not merged"
    assert len(by_page[2]) > 1
    page2 = doc.blocks[1]
    assert all(page2.start <= c.char_start and c.char_end <= page2.end for c in by_page[2])


def test_pptx_one_chunk_per_slide():
    slides = [f"Slide {i} title\n\nBullet about {i}." for i in range(1, 6)]
    chunks = run(paged_doc(slides, "pptx"))
    assert [c.page_start for c in chunks] == [1, 2, 3, 4, 5]
    assert [c.text for c in chunks] == slides


# --- spreadsheets ---

def test_sheets_repeat_header_and_never_mix():
    rows = ["id | name | city"] + [f"{i} | person {i} | city {i % 7}" for i in range(120)]
    doc = sheet_doc({"People": rows, "Cities": ["city | country", "Paris | France", "Rome | Italy"]})
    chunks = run(doc, max_tokens=64, overlap=10)
    people = [c for c in chunks if c.section == ("People",)]
    cities = [c for c in chunks if c.section == ("Cities",)]
    assert len(people) > 5 and len(cities) == 1 and len(people) + 1 == len(chunks)
    assert all(c.context == "id | name | city" for c in people)
    assert cities[0].context == "city | country"
    assert all("Paris" not in c.text for c in people)
    assert all(c.tokens + count_tokens(c.context) <= 64 for c in chunks)
    assert all(b.char_start >= a.char_end for a, b in zip(chunks, chunks[1:])), "rows not repeated"


# --- code ---

PYTHON = '''"""Module docstring."""

import os

LIMIT = 3


# Attached comment.
@decorator
def top(a, b):
    """Adds."""
    return a + b


class Small:
    """A small class."""

    def one(self):
        return 1


class Big:
    """A class too big for one chunk."""

    kind = "big"
    size = 10

%s
def tail():
    return os.sep
'''


def _methods(count: int) -> str:
    return "\n".join(
        f"    @property\n    def method_{i}(self):\n        \"\"\"Doc {i}.\"\"\"\n"
        f"        value = {i} * self.size\n        return value + {i}\n"
        for i in range(count)
    )


def test_python_symbols_and_decorators():
    text = PYTHON % _methods(12)
    doc = Document("m.py", "code", text, language="python")
    chunks = run(doc, max_tokens=128, overlap=0)
    symbols = [c.symbol for c in chunks]
    assert "top" in symbols and "Small" in symbols and "tail" in symbols
    top = next(c for c in chunks if c.symbol == "top")
    assert top.text.startswith("# Attached comment.\n@decorator\ndef top")
    methods = [c for c in chunks if (c.symbol or "").startswith("Big.method_")]
    assert len(methods) == 12 and all(c.text.lstrip().startswith("@property") for c in methods)
    header = next(c for c in chunks if c.symbol == "Big")
    assert "class Big" in header.text and 'kind = "big"' in header.text
    assert all(c.language == "python" for c in chunks)
    assert chunks[0].symbol is None and "import os" in chunks[0].text


def test_huge_python_function_split_at_statements_keeps_symbol():
    body = "\n".join(f"    step_{i} = compute({i}, 'argument number {i}')" for i in range(120))
    text = f"def huge():\n    \"\"\"Does a lot.\"\"\"\n{body}\n    return step_0\n"
    chunks = run(Document("h.py", "code", text, language="python"), max_tokens=100, overlap=0)
    assert len(chunks) > 5 and all(c.symbol == "huge" for c in chunks)
    assert all(c.text.strip().startswith(("def huge", "step_")) for c in chunks)


def test_python_syntax_error_falls_back_to_lines():
    text = "def broken(:\n    pass\n\n" + "x = 1\n" * 50
    chunks = run(Document("b.py", "code", text, language="python"), max_tokens=32, overlap=0)
    assert all(c.symbol is None for c in chunks)


TREE_SITTER = [
    ("go", "package main\n\ntype Server struct{ port int }\n\n// Start runs it.\nfunc (s *Server) Start() error {\n\treturn nil\n}\n\nfunc main() {\n\tprintln(1)\n}\n",
     {"Server", "Server.Start", "main"}),
    ("javascript", "import x from 'y';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nexport class Shape {\n  area() { return 0; }\n}\n\nconst mul = (a, b) => a * b;\n",
     {"add", "Shape", "mul"}),
    ("typescript", "interface Point { x: number }\n\nexport function dist(p: Point): number {\n  return p.x;\n}\n",
     {"Point", "dist"}),
    ("rust", "use std::fmt;\n\nstruct Point { x: i32 }\n\nimpl Point {\n    fn new() -> Self { Point { x: 0 } }\n}\n\nfn main() {\n    println!(\"hi\");\n}\n",
     {"Point", "main"}),
    ("java", "package a;\n\npublic class Greeter {\n  public String greet(String n) {\n    return \"hi \" + n;\n  }\n}\n",
     {"Greeter"}),
    ("c", "#include <stdio.h>\n\nstatic int add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  return add(1, 2);\n}\n",
     {"add", "main"}),
    ("cpp", "namespace ns {\nclass Foo {\n public:\n  int bar() { return 1; }\n};\n}\n\nint Foo::baz() { return 2; }\n",
     {"ns", "Foo::baz"}),
    ("bash", "#!/bin/sh\n\ngreet() {\n  echo hi\n}\n\ngreet\n", {"greet"}),
]


@pytest.mark.parametrize(("language", "source", "symbols"), TREE_SITTER)
def test_tree_sitter_symbols(language, source, symbols):
    chunks = run(Document(f"f.{language}", "code", source, language=language))
    assert symbols <= {c.symbol for c in chunks}
    assert all(c.language == language for c in chunks)


@pytest.mark.parametrize("language", ["java", "go", "rust"])
def test_tree_sitter_big_container_splits_into_members(language):
    methods = {
        "java": ("public class Big {\n", "  int m{i}() {{\n    int v = {i} * 2;\n    return v + {i};\n  }}\n", "}\n", "Big.m3"),
        "go": ("package big\n\n", "func (b *Big) M{i}() int {{\n\tv := {i} * 2\n\treturn v + {i}\n}}\n\n", "", "Big.M3"),
        "rust": ("impl Big {\n", "    fn m{i}(&self) -> i32 {{\n        let v = {i} * 2;\n        v + {i}\n    }}\n", "}\n", "Big.m3"),
    }[language]
    head, member, foot, expected = methods
    text = head + "".join(member.format(i=i) for i in range(30)) + foot
    chunks = run(Document("big", "code", text, language=language), max_tokens=64, overlap=0)
    assert expected in {c.symbol for c in chunks}


def test_huge_tree_sitter_function_split_keeps_symbol():
    body = "\n".join(f"\tx{i} := compute({i}, \"argument {i}\")" for i in range(100))
    text = f"package main\n\nfunc huge() {{\n{body}\n}}\n"
    chunks = run(Document("h.go", "code", text, language="go"), max_tokens=80, overlap=0)
    assert len(chunks) > 4
    assert all(c.symbol == "huge" for c in chunks if "compute" in c.text)


def test_unknown_language_falls_back_to_blank_line_blocks():
    text = "\n\n".join(f"PROC p{i}\n  CALL x{i}\nEND" for i in range(40))
    chunks = run(Document("a.cob", "code", text, language="cobol"), max_tokens=32, overlap=0)
    assert len(chunks) > 3 and all(c.language == "cobol" for c in chunks)
