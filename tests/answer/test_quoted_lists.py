"""Answerable questions answered with the wrong sentences because of how a list, an option's label or a later part of
a question is read (issue 28, `wrong4`).  Real text: xargs(1) of manpages-zh, LilyPond's Chinese manual,
shared-mime-info's README.md, LXGW WenKai's changelog, postgresql-common's README.Debian.

- A list question's quoted item is read with its list whole (shape.enumerated): "一是 … 二是 …" quoted half answers
  "哪两个理由" half.
- An option's label line (`--null, -0`, `--help`) or a version (`1.004`) is no list item: a "how do I" question whose
  best sentence describes an option was answered with the option labels around it as if they were its steps.
- A later part of a question ranked with the part before it puts that part's answer first: it quotes its next picks
  ("that new one will run on 5433"), not nothing (pipeline._part_quotes).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docqa.answer.extractive import Extract, Sentence, _candidates, _labelled, extract
from docqa.answer.pipeline import _part_quotes
from docqa.answer.shape import _is_item, enumerated, shape
from docqa.answer.statement import quotable_spans

from .hits import hit_in, sources

# xargs(1) of manpages-zh as docqa reads it: option label lines, each followed by its description.
XARGS = ("""选项 (OPTIONS)

--null, -0
输入 的 文件名 以 null 字符 结尾, 而不是 空格, 引号 和 反斜杠 并不 特殊 处理 (所有 字符 都以 字面 意思 解释). """
         """禁止 文件尾 字符串, 当 另一个 参数 处理. 当参数 含有 空格, 引号, 反斜杠 时 很方便. GNU find 的 -print0 选项 产生 适合这种 模式 的 输出.

--eof[=eof-str], -e[eof-str]
把 文件尾 字符串 设置 成eof-str. 如果 文件尾 字符串 出现 在 输入中 的某行, 余下的 行 将被 忽略.

--help
显示 xargs 的 选项, 然后 退出.

--replace[=replace-str], -i[replace-str]
把 initial-arguments 里的 所有 replace-str 替换为 从 标准 输入 里 读入的 名称. 同时, 没有 用 引号 括起来 的 空格 不会 结束 参数.
""")

# LilyPond's Chinese manual: reasons given in turn, "一是 … 二是 …", between sentences of the same paragraph.
LILYPOND = ("依惯例，版本声明会放在 LilyPond 文件的最开头。版本声明非常重要，原因有二。一是它能够使得 LilyPond 语法更新自动应用在输入文件上。"
            "二是它指明了编译这份文件所需的 LilyPond 版本。如果输入文件中忘记标版本声明了，LilyPond 会在编译文件时给出警告。")

# shared-mime-info's README.md: a Markdown list whose items are sentences of their own.
MIME = """This is the freedesktop.org shared MIME info database.

The shared-mime-info package contains:

- The core database of common MIME types, their file extensions and icon names.
- The update-mime-database command, used to extend the DB and install a new MIME data.
- The freedesktop.org shared MIME database spec.

It is used by GLib and Qt to guess the type of a file.
"""

# postgresql-common's README.Debian.
POSTGRES = """Port assignment
---------------
Please note that the pg_* tools automatically manage the server ports
unless you specify them manually. The first cluster which is ever
created (by any major version) will run on the default port 5432, and
each new cluster will use the next higher free one.

E. g. if you first install "postgresql-11" on a clean system, the
default 11/main cluster will run on port 5432. If you then create
another 11 cluster, or install the "postgresql-12" package, that new
one will run on 5433.
"""


@dataclass
class Quote:
    n: int
    start: int
    end: int
    text: str
    score: float = 0.0


def quotes(text: str) -> list[Quote]:
    return [Quote(1, s, e, text[s:e]) for s, e in quotable_spans(text)]


def starting(candidates: list, prefix: str):
    return next(q for q in candidates if q.text.startswith(prefix))


@pytest.mark.parametrize(("line", "item"), [
    ("--null, -0\n输入 的 文件名 以 null 字符 结尾", False),  # an option's label line (xargs(1))
    ("--help\n显示 xargs 的 选项, 然后 退出.", False),
    ("-h, --human-readable\n以人类可读的格式输出大小", False),
    ("*bold* words are emphasised", False),
    ("1.004 新增 Mono 等宽版", False),  # a version, not item 1
    ("- RC5", True),
    ("- The core database of common MIME types, their file extensions and icon names.", True),
    ("1. 下载源码包", True),
    ("2) Get a shell for the database superuser 'postgres'.", True),
    ("一是它能够使得 LilyPond 语法更新自动应用在输入文件上。", True),
])
def test_what_starts_a_list_item(line, item):
    assert _is_item(Quote(1, 0, len(line), line)) is item


def test_a_how_question_answered_by_an_option_gets_no_steps_of_option_labels():
    """The best pick is the `--help` option's description: the options after it are no steps of a procedure (on main
    the answer was `--help` and `--replace` "in order", and `--null`, the third pick, was left out)."""
    candidates = quotes(XARGS)
    picked = [starting(candidates, "--help"), starting(candidates, "--replace"), starting(candidates, "--null")]
    got = shape("xargs 这边该怎么改，find 那边要配合加什么？", candidates, picked, 0.0, lambda n: XARGS)
    assert got is None or not got.steps


@pytest.mark.parametrize(("text", "shown", "expected"), [
    # the second reason quoted after another sentence: both reasons, in order, where it stood
    (LILYPOND, ["依惯例", "二是"], ["依惯例", "一是", "二是"]),
    (LILYPOND, ["一是", "如果"], ["一是", "二是", "如果"]),
    # a Markdown item quoted second: its list whole, with the line that introduces it
    (MIME, ["This is", "- The update"], ["This is", "The shared", "- The core", "- The update", "- The freedesktop"]),
    # no item quoted: nothing added
    (LILYPOND, ["依惯例", "如果"], ["依惯例", "如果"]),
])
def test_a_quoted_item_is_read_with_its_list(text, shown, expected):
    candidates = quotes(text)
    got = enumerated(candidates, [starting(candidates, p) for p in shown], lambda n: text)
    assert [q.text[: len(p)] for q, p in zip(got, expected)] == expected and len(got) == len(expected)
    assert all(text[q.start : q.end] == q.text for q in got)  # spans of the chunk: citable


def test_a_later_part_quotes_what_it_adds_when_an_earlier_part_quoted_its_first_picks():
    """"…, and which one does a second cluster get?" is ranked with the part before it: its first two picks are the
    first part's answer (5432), quoted already; its third says 5433."""
    pool = sources(hit_in(POSTGRES, 0, len(POSTGRES), path="/doc/postgresql-common/README.Debian", section="Port assignment",
                          type_="text"))
    spans = quotable_spans(POSTGRES)
    sentence = {POSTGRES[s:e].split()[0] + POSTGRES[s:e].split()[1]: Sentence(1, s, e, POSTGRES[s:e]) for s, e in spans}
    chosen = [sentence["E.g."], sentence["Thefirst"], sentence["Ifyou"], sentence["Pleasenote"]]
    result = Extract(chosen, evidence=0.4, abstained=False, candidates=list(sentence.values()))
    seen = {("c1", chosen[0].start), ("c1", chosen[1].start)}  # the first part quoted these
    got = _part_quotes(result, pool, 2, seen)
    assert [s.text.split()[:2] for s in got] == [["Please", "note"], ["If", "you"]]
    assert "5433" in " ".join(s.text for s in got)
    # nothing quoted before: the part's first picks, as before
    assert [s.start for s in _part_quotes(result, pool, 2, set())] == sorted([chosen[0].start, chosen[1].start])


# valgrind's manual-core.html (DocBook <dl class="variablelist">) as the HTML reader lays it out
CORE = """--error-exitcode=<number> [default: 0]

Specifies an alternative exit code to return if Valgrind reported any errors in the run. When set to the default \
value (zero), the return value from Valgrind will always be the return value of the process being simulated. When set \
to a nonzero value, that value is returned instead, if Valgrind detects any errors.

--show-error-list=no|yes [default: no]

If this option is enabled, for tools that report errors, valgrind will show the list of detected errors and the list \
of used suppressions at exit.
"""


def candidate_texts(text: str, question: str, path: str) -> list:
    found = sources(hit_in(text, 0, len(text), path=path, section="Options", type_="text"))
    return _candidates(found, 1, question)


@pytest.mark.parametrize(("text", "question", "label", "holds"), [
    # xargs(1): what --null is for and what find must add are two sentences of one description
    (XARGS, "文件名里带空格被拆成两个参数，xargs 这边该怎么改，find 那边要配合加什么？", "--null, -0", "GNU find 的 -print0 选项"),
    # the Valgrind manual: the option, and what its value does, in one candidate
    (CORE, "How do I make the run fail when Valgrind finds errors?", "--error-exitcode=<number>",
     "When set to a nonzero value, that value is returned instead"),
])
def test_an_options_short_description_is_one_candidate_each_sentence_cited(text, question, label, holds):
    candidates = candidate_texts(text, question, "/kb/option.txt")
    whole = next(s for s in candidates if s.text.startswith(label))
    assert holds in whole.text
    assert not any(s is not whole and holds in s.text for s in candidates)  # not quoted twice
    assert len(whole.pieces) >= 2 and whole.pieces[0][0] == whole.start and whole.pieces[-1][1] == whole.end
    assert all(text[a:b].strip() and a < b for a, b in whole.pieces)
    assert [text[a:b] for a, b in whole.pieces] == [text[a:b] for a, b in _labelled(text, quotable_spans(text))
                                                   if whole.start <= a < whole.end]  # each sentence, as it was


def test_the_option_the_question_names_and_a_one_sentence_option_are_read_as_before():
    candidates = candidate_texts(XARGS, "xargs 的 --replace 选项有什么作用？", "/kb/xargs.1")
    assert [s.text for s in candidates if s.text.startswith("--replace") or s.term.startswith("--replace")] == [
        "--replace[=replace-str], -i[replace-str]\n把 initial-arguments 里的 所有 replace-str 替换为 从 标准 输入 里 读入的 名称.",
        "同时, 没有 用 引号 括起来 的 空格 不会 结束 参数."]  # named: sentence by sentence, each under its label
    help_ = next(s for s in candidates if s.text.startswith("--help"))
    assert help_.text == "--help\n显示 xargs 的 选项, 然后 退出." and help_.pieces == ()  # one sentence: as before


@pytest.mark.parametrize("threshold", [0.0, 0.999])
def test_an_option_read_whole_changes_what_is_quoted_not_whether(threshold, hash_embedder):
    """The decision was fitted on sentences: it judges the question as with every description read sentence by
    sentence (the same evidence, features and abstention), and only what is quoted reads `--null` whole."""
    pool = sources(hit_in(XARGS, 0, len(XARGS), path="/kb/man/zh_CN/man1/xargs.1", section="选项 (OPTIONS)", type_="text"))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    question = "文件名里带空格被拆成两个参数，xargs 这边该怎么改，find 那边要配合加什么？"
    whole = extract(question, pool, {}, embed, threshold=threshold)
    apart = extract(question, pool, {}, embed, threshold=threshold, whole=False)
    assert whole.evidence == apart.evidence and whole.features == apart.features
    assert whole.abstained is apart.abstained is (threshold > 0.5)
    assert not any(s.pieces for s in apart.candidates)
    if not whole.abstained:  # (an abstention is the sentences' own, as it would be)
        null = next((s for s in whole.candidates if s.text.startswith("--null")), None)
        assert null is not None and "-print0" in null.text and len(null.pieces) == 4
