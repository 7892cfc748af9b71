"""A procedure's steps read whole and in order, and a list item read with the line that introduces its list (issue 28,
item 4, `steps2`): a step's block of several command lines is one quote with its introduction (answer/rows.py), a step
of several sentences does not end the list, a later sentence of a step stands for its step (answer/shape.py), and an
item's question terms are counted with its list's lead-in (extractive.LEAD_TERMS).  Real text: the Debian Edu
Bookworm manual (Chinese translation) as docqa's HTML reader renders it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docqa.answer import extractive, shape
from docqa.answer.extractive import extract
from docqa.answer.rows import introduced_commands, shown_lines, step_commands
from docqa.answer.statement import quotable_spans
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .hits import hit_in, sources

# 12.2.1 升级主服务器: items that introduce blocks of commands, items of several sentences, a nested list.
UPGRADE = ("12.2.1. 升级主服务器\n\n- 首先确保当前系统是最新的：\n\napt update\napt full-upgrade\n\n"
           "- Prepare and start the upgrade to Bookworm:\n\nsed -i 's/bullseye/bookworm/g' /etc/apt/sources.list\n"
           "export LC_ALL=C\napt update\napt upgrade --without-new-pkgs\napt full-upgrade\n\n"
           "- apt-list-changes：准备好阅读大量的消息；按 <return> 向下滚动，<q> 离开这一页面。所有消息会被邮递给 root 而可以再次阅读"
           "（使用 mailx 或者 mutt）。\n\n"
           "- Read all debconf information carefully, choose 'keep the local version currently installed' unless stated "
           "differently below; in most cases hitting return will be fine.\n\n  - restart services: Choose yes.\n\n"
           "  - Samba服务器和实用程序:选择“保持当前安装的本地版本”.\n\n  - openssh-server：选择“保持当前安装的本地版本”。\n\n"
           "- 应用和调整配置：\n\ncf-agent -v -D installation\n\n- 检查升级系统是否正常工作：\n\n重启；以首个用户登录并测试\n")
UPGRADE_Q = "要把 Debian Edu 主服务器从 Bullseye 升级到 Bookworm，大致要按什么顺序执行哪些命令？"

# 4.1 硬件需求: the sizes are items of a nested list; only its lead-in says they are disk space.
HARDWARE = ("4.1. 硬件需求\n\n不同设定的目的在网络架构一章中解释。\n\n"
            "- 瘦客户端能够仅有 256 MiB RAM 而且是 400 MHz 的处理器，但推荐用更多的 RAM 和更快的处理器。\n\n"
            "- 对于工作站，无盘工作站和独立使用的系统，1500 MHz 及 1024 MiB 的内存绝对是最低限度的需求。"
            "为运行最新的 web 浏览器和 LibreOffice 建议至少是 2048 MiB 的内存。\n\n"
            "- 最低限度的磁盘空间需求取决于所安装的设定：\n\n"
            "  - combined main server + LTSP server + workstation (if a GUI on the server is desired): 60 GiB (plus "
            "additional space for user accounts).\n\n  - LTSP 服务器：40 GiB。\n\n  - 工作站或独立系统：30 GiB。\n\n"
            "  - minimal networked machine installation: 4 GiB.\n\n"
            "- LTSP 服务器在使用缺省网络架构时需要两个网卡：\n\n  - eth0 连接到主网（10.0.0.0/8），\n\n  - 使用 eth1 为 LTSP 客户端服务。\n")


@dataclass
class Quote:
    n: int
    start: int
    end: int
    text: str
    score: float = 0.0


def candidates(question: str, text: str) -> list[Quote]:
    """The chunk's sentences as the answerer reads them: an introduced block of commands replaces its introduction and
    the spans inside it (extractive._candidates)."""
    spans = quotable_spans(text)
    merged = dict(introduced_commands(question, text, spans))
    out, end = [], -1
    for s, e in spans:
        if s < end:
            continue
        e = merged.get(s, e)
        out.append(Quote(1, s, e, text[s:e]))
        end = e
    return out


@pytest.mark.parametrize(("intro", "last"), [
    ("- 首先确保当前系统是最新的：", "apt full-upgrade"),
    ("- Prepare and start the upgrade to Bookworm:", "apt upgrade --without-new-pkgs\napt full-upgrade"),
    ("- 应用和调整配置：", "cf-agent -v -D installation"),
])
def test_a_block_of_command_lines_is_quoted_whole_with_its_introduction(intro, last):
    """Every command line of the block under "make sure the system is up to date:" (on main only its first line was)."""
    spans = quotable_spans(UPGRADE)
    [(s, e)] = [(s, e) for s, e in introduced_commands(UPGRADE_Q, UPGRADE, spans) if UPGRADE[s:e].startswith(intro)]
    assert UPGRADE[s:e].endswith(last)
    assert UPGRADE[e:].startswith("\n\n")  # the block ends at the blank line


def test_a_block_never_runs_into_the_next_sentence():
    text = "Run this:\n\napt update\nThen reboot the machine.\n"
    [(s, e)] = introduced_commands("How do I update the system?", text, quotable_spans(text))
    assert text[s:e] == "Run this:\n\napt update"


def _steps_for(best_start: str) -> list[str]:
    cands = candidates(UPGRADE_Q, UPGRADE)
    best = next(q for q in cands if q.text.startswith(best_start))
    got = shape.shape(UPGRADE_Q, cands, [best], 0.0, lambda n: UPGRADE)
    assert got is not None and got.steps
    assert [q.start for q in got.sentences] == sorted(q.start for q in got.sentences)  # in reading order
    return [q.text for q in got.sentences]


@pytest.mark.parametrize("best", ["- Prepare and start", "按 <return>", "- 首先确保"])
def test_a_procedure_whose_steps_have_several_sentences_is_quoted_whole(best):
    """The steps run on past "- apt-list-changes：…；" (a step of three sentences, which ended the list on main) to the
    configuration step's `cf-agent`; a later sentence of a step picked first stands for its step."""
    texts = _steps_for(best)
    assert texts[0].startswith("- 首先确保当前系统是最新的：") and texts[0].endswith("apt full-upgrade")
    assert any(t.startswith("按 <return>") for t in texts) and any(t.endswith("cf-agent -v -D installation") for t in texts)
    assert any(t.startswith("  - restart services") or t.startswith("- restart services") for t in texts)  # nested, in place


def test_a_long_list_of_items_of_several_sentences_is_cut():
    item = "- Step {i}: do the thing numbered {i}. Then check that it worked. Keep the log of it for later.\n"
    text = "How to proceed:\n\n" + "".join(item.format(i=i) for i in range(1, 9))
    cands = [Quote(1, s, e, text[s:e]) for s, e in quotable_spans(text)]
    got = shape.shape("How do I proceed?", cands, [cands[1]], 0.0, lambda n: text)
    assert got is not None and got.steps
    shown = sum(q.end - q.start for q in got.sentences[1:])
    assert shown <= shape.MAX_CHARS and got.sentences[-1].text.startswith("Keep the log")  # whole items only


def test_inline_reasons_are_no_items_of_several_sentences():
    """"一是 … 二是 …" within a paragraph: the sentence after the second reason is not part of it."""
    text = ("版本声明非常重要，原因有二。一是它能够使得 LilyPond 语法更新自动应用在输入文件上。二是它指明了编译这份文件所需的 LilyPond 版本。"
            "如果输入文件中忘记标版本声明了，LilyPond 会在编译文件时给出警告。")
    cands = [Quote(1, s, e, text[s:e]) for s, e in quotable_spans(text)]
    second = next(q for q in cands if q.text.startswith("二是"))
    got = shape.shape("手册给了哪两个理由？", cands, [second], 0.0, lambda n: text)
    assert got is not None and [q.text[:2] for q in got.sentences] == ["一是", "二是"]


def test_a_list_item_is_ranked_with_its_lead_in(hash_embedder, monkeypatch):
    """"- LTSP 服务器：40 GiB。" holds "LTSP 服务器" and not "磁盘空间"; its list's lead-in holds the rest: the item's
    question terms count them (on main the item covered less of the question than the bare lead-in)."""
    question = "单独的 LTSP 服务器最少需要多少磁盘空间？"
    pool = sources(hit_in(HARDWARE, 0, len(HARDWARE), path="/docs/debian-edu/debian-edu-bookworm-manual.html",
                          section="4. 需求 > 4.1. 硬件需求", type_="html"))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731

    def terms(lead: bool) -> dict[str, float]:
        monkeypatch.setattr(extractive, "LEAD_TERMS", lead)
        result = extract(question, pool, {}, embed, threshold=0.0)
        return {s.text.strip(): s.terms for s in result.candidates}

    with_lead, without = terms(True), terms(False)
    item, lead_in = "- LTSP 服务器：40 GiB。", "- 最低限度的磁盘空间需求取决于所安装的设定："
    alone = "- 瘦客户端能够仅有 256 MiB RAM 而且是 400 MHz 的处理器，但推荐用更多的 RAM 和更快的处理器。"  # no list above it
    assert with_lead[item] > without[item] and with_lead[item] > with_lead[lead_in]
    assert with_lead[lead_in] == without[lead_in] and with_lead[alone] == without[alone]


# systemd's README.Debian and openssl's README.Debian (plain text), the Debian Edu manual (HTML reader).
@pytest.mark.parametrize(("quote", "shown"), [
    ("To enable persistent logging, create /var/log/journal:\n\n  mkdir -p /var/log/journal\n"
     "  systemd-tmpfiles --create --prefix /var/log/journal",
     "To enable persistent logging, create /var/log/journal:\n  mkdir -p /var/log/journal\n"
     "  systemd-tmpfiles --create --prefix /var/log/journal"),
    ("Some algorithms used in the library are covered by patents.  As\na result, the following algorithms in libcrypto "
     "have been disabled:\n- RC5\n- MDC2\n- IDEA",
     "Some algorithms used in the library are covered by patents. As a result, the following algorithms in libcrypto "
     "have been disabled:\n- RC5\n- MDC2\n- IDEA"),
    ("- 首先确保当前系统是最新的：\n\napt update\napt full-upgrade", "- 首先确保当前系统是最新的：\napt update\napt full-upgrade"),
    # prose wrapped over lines, a colon inside a sentence, a sentence after the colon: one line, as before
    ("   On multi-user machines, Git users might find themselves\n   unexpectedly in a Git worktree, e.g. when another"
     " user created a\n   repository in `C:\\.git`.",
     "On multi-user machines, Git users might find themselves unexpectedly in a Git worktree, e.g. when another user "
     "created a repository in `C:\\.git`."),
    ("The following are supported:\nthe first format, which is old.", "The following are supported: the first format, which is old."),
    ("* CVE-2022-24765:\n   On multi-user machines, Git users might find themselves\n   unexpectedly in a Git worktree.",
     "* CVE-2022-24765: On multi-user machines, Git users might find themselves unexpectedly in a Git worktree."),
])
def test_commands_and_items_under_an_introduction_keep_a_line_each(quote, shown):
    assert shown_lines(quote) == shown


# zstd's README.md: a how-to with no sentence at all, numbered labels each over its command line.
ZSTD = ("### Dictionary compression How To:\n\n1. Create the dictionary\n\n"
        "   `zstd --train FullPathToTrainingSet/* -o dictionaryName`\n\n2. Compress with dictionary\n\n"
        "   `zstd -D dictionaryName FILE`\n\n3. Decompress with dictionary\n\n   `zstd -D dictionaryName --decompress FILE.zst`\n")
ZSTD_Q = "How do I train a zstd dictionary and then compress a file with it?"


def test_a_how_to_of_labels_and_commands_is_read_step_by_step():
    spans = quotable_spans(ZSTD)
    assert spans == []  # nothing the answerer could quote on main
    got = [ZSTD[s:e] for s, e in step_commands(ZSTD_Q, ZSTD, spans)]
    assert [x.split("\n")[0] for x in got] == ["1. Create the dictionary", "2. Compress with dictionary", "3. Decompress with dictionary"]
    assert got[0].endswith("`zstd --train FullPathToTrainingSet/* -o dictionaryName`")
    assert shown_lines(got[1]) == "2. Compress with dictionary\n   `zstd -D dictionaryName FILE`"
    assert step_commands("What does a zstd dictionary improve?", ZSTD, spans) == []  # no procedure asked
    assert step_commands("怎样训练一个 zstd 字典，再用它来压缩文件？", ZSTD, spans) == step_commands(ZSTD_Q, ZSTD, spans)


def test_a_how_to_of_labels_and_commands_is_answered_whole_in_order(hash_embedder):
    pool = sources(hit_in(ZSTD, 0, len(ZSTD), path="/docs/zstd/README.md", section="Dictionary compression How To:"))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract(ZSTD_Q, pool, {}, embed, threshold=0.0)
    assert result.shape is not None and result.shape.steps
    assert [s.text.split("\n")[0][:2] for s in result.shape.sentences] == ["1.", "2.", "3."]
    assert all(ZSTD[s.start:s.end] == s.text for s in result.shape.sentences)  # each a span of the chunk: citable
    assert extract(ZSTD_Q, pool, {}, embed, threshold=0.999).abstained  # the decision still judges


@pytest.mark.slow  # a knowledge base built and asked: over 2 s on a loaded machine
def test_the_published_steps_keep_their_lines(tmp_path, hash_embedder):
    """End to end, no model: each step of the how-to on its own lines, its command under its label, cited."""
    docs = tmp_path / "docs" / "zstd"
    docs.mkdir(parents=True)
    (docs / "README.md").write_text("# Zstandard\n\nZstandard is a fast compression algorithm.\n\n" + ZSTD, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=hash_embedder) as kb:
        kb.add([tmp_path / "docs"])
        answer = kb.ask(ZSTD_Q)
        assert answer.mode == "extractive", answer.answer
        assert ("1. Create the dictionary\n   `zstd --train FullPathToTrainingSet/* -o dictionaryName` [1]\n\n"
                "2. Compress with dictionary\n   `zstd -D dictionaryName FILE` [1]") in answer.answer
        for c in answer.citations:
            assert kb.documents.text(c.document_id)[c.char_start : c.char_end] == c.quote
