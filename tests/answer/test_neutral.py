"""Across languages, the tokens a question and a sentence can share (docqa.answer.neutral), and the decision that weighs
them: questions and sentences from the trust dev set (Chinese questions over English documentation and the reverse)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.answer import answerability, neutral
from docqa.answer.extractive import extract

from .hits import hit_in, sources

CANDIDATE = Path(__file__).resolve().parents[2] / "benchmarks" / "trust" / "decision_neutral.json"


@pytest.mark.parametrize("question, other, expected", [
    ("CVE-2023-25652 的 CVSS 评分是多少？", [], ["cve-2023-25652", "cvss"]),
    ("systemd 系统上 render 组的 GID 是多少？", [], ["systemd", "render", "gid"]),
    ("在 Callgrind 完整插桩下，程序大概会慢多少倍？", [], ["callgrind"]),
    ("tar 的 --remove-files 选项是做什么的？", [], ["--remove-files", "tar"]),  # the option whole, not its parts
    # an English question: its technical words that the Chinese text writes as they are; not its everyday words
    ("In journalctl's --priority option, which number does the level \"err\" correspond to?",
     ["-p, --priority= 根据日志等级(包括等级范围)过滤输出结果。",
      "日志等级数字与其名称之间的对应关系如下 (参见 syslog(3))： \"emerg\" (0), \"err\" (3), \"warning\" (4)",
      "man journalctl 的 number 参数"],
     ["--priority", "journalctl", "err"]),
    ("Which groff version does the manpages-zh README recommend for Chinese man pages to display well?",
     ["请参考 [issue #3](https://github.com/man-pages-zh/manpages-zh/issues/3) 了解某些用户的测试情况。",
      "为了确保您的阅览体验最佳，请保证您系统上的 groff 为最新版本（1.22.4）。"],
     ["groff", "manpages-zh"]),
    ("Which groff version does the manpages-zh README recommend?", ["The README says groff 1.22.4."], []),  # no Chinese side
])
def test_the_language_neutral_tokens_of_a_question(question, other, expected):
    assert neutral.tokens(question, other) == expected


@pytest.mark.parametrize("question, held, crossing, expected", [
    ("在 Callgrind 完整插桩下，程序大概会慢多少倍？", "At present, Helgrind only properly supports glibc-2.3 or later.", True, 1.0),
    ("在 Callgrind 完整插桩下，程序大概会慢多少倍？",
     "Callgrind's full instrumentation makes the program run about 50 times slower.\ncl-manual.html", True, 0.0),
    ("CVE-2023-25652 的 CVSS 评分是多少？",
     "This release merges the fixes that appear in v2.30.9 to address the security issues CVE-2023-25652, CVE-2023-25815,"
     " and CVE-2023-29007", True, 0.5),  # the CVE, not the score's CVSS
    ("systemd 系统上 tty 组的 GID 必须是多少？", "There's one exception however: the `tty` group must have the GID 5.\nUIDS-GIDS.md.gz",
     True, 1 / 3),  # tty and GID held, systemd in neither the sentence nor its file name
    ("Which group does Debian use for tty?", "tty 组的 GID 是 5。", False, 0.0),  # within one language: nothing to weigh
])
def test_the_share_of_neutral_tokens_a_sentence_lacks(question, held, crossing, expected):
    tokens = neutral.tokens(question, [held])
    assert neutral.features(question, held, crossing, tokens)["neutral_missing"] == pytest.approx(expected)


HELGRIND = """Helgrind: a thread error detector

Helgrind is a Valgrind tool for detecting synchronisation errors in C, C++ and Fortran programs that use the POSIX
pthreads threading primitives. At present, Helgrind only properly supports glibc-2.3 or later.
"""


def test_a_cross_lingual_answer_lacking_the_named_tool_is_less_likely_right(hash_embedder, monkeypatch):
    """A Chinese question naming Callgrind, over an English page on Helgrind: the page lacks one of the question's two
    language-neutral tokens, so a decision that weighs `neutral_missing` (the candidate
    benchmarks/trust/decision_neutral.json) gives it a lower probability than the same evidence with every token held;
    a question naming Helgrind lacks none."""
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(CANDIDATE))
    def embed(texts, kind):
        return hash_embedder.embed_batch(texts, kind)

    def answer(question):
        return extract(question, sources(hit_in(HELGRIND, 0, len(HELGRIND), path="/kb/valgrind/hg-manual.html")), {}, embed,
                       threshold=0.0)

    named, lacking = answer("Helgrind 要求哪个版本以上的 glibc？"), answer("Callgrind 要求哪个版本以上的 glibc？")
    assert named.features["crossing"] == 1.0 and named.features["neutral_missing"] == 0.0
    assert lacking.features["neutral_missing"] == 0.5 and lacking.features["pick_neutral_missing"] == 0.5
    features = dict(lacking.features)
    assert answerability.probability(features) < answerability.probability({**features, "neutral_missing": 0.0})
