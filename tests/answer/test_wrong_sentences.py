"""Answerable questions answered with the wrong sentence (issue 28, `wrong5`): what the sentence ranking reads as the
kind of value asked, and a sentence the splitter cut in two.  Real text of the trust dev set's documentation: Python
3.11's README.Debian, fdisk(8) in Chinese, the Debian Edu 12 manual in Chinese, vim-common's NEWS.Debian,
libreadline8's README.Debian.

- A number the question writes itself states no quantity: "This is Python 3.11 packaged for Debian." does not answer
  "How many modules does the Python 3.11 regression test skip?" (extractive's `type` and `amount`).
- 哪几个配置文件 asks which files, not how many: the ranking reads the path kind, not the number kind.
- A sentence cut by the example it displays is one candidate with the example in it (rows.carried).
- A setting asked for ("which readline setting …?") is answered by the line a sentence introduces with a colon.
"""

from __future__ import annotations

import pytest

from docqa.answer import extractive, rows
from docqa.answer.extractive import Sentence, _candidates
from docqa.answer.statement import quotable_spans

from .hits import hit_in, sources

PYTHON = """This is Python 3.11 packaged for Debian.

The package does successfully run the regression tests for all included
modules. Seven packages are skipped since they are platform-dependent and
can't be used with Linux.
"""
FDISK = """如果你使用 cfdisk 或 fdisk 更改了 DOS 分区表的条目，你必须同时使用 dd 命令将该分区的前512个字节清零。
前一种描述很好 - 如果每扇区 512 个字节的情况，这种方式可描述到 2TB 的大小。
"""
EDU = """这一般有两个方法来处理：（1）移除一些文件或者（2）增加该分区的大小。
当应用时，它从 /usr/share/debian-edu-config/fsautoresizetab，/site/etc/fsautoresizetab 和 /etc/fsautoresizetab 得到配置信息。
"""
VIM_NEWS = """vim (2:8.0.0022-1) unstable; urgency=medium

  Vim now ships with a defaults.vim file which, when the user has no vimrc,
  enables some options that have historically been disabled by default.  This
  is described in more detail at ":help defaults.vim".

  Since defaults.vim is loaded when the user's vimrc would typically be
  loaded, it will override any settings in /etc/vim/vimrc(.local).  In order
  to disable the loading of defaults.vim, add

    let g:skip_defaults_vim = 1

  to /etc/vim/vimrc(.local).

 -- James McCoy <jamessan@debian.org>  Tue, 04 Oct 2016 20:28:02 -0400
"""
READLINE = """0. symlinked directory completion behavior

   Starting with readline-4.2a, completion on symlinks that point
   to directories does not append the slash. To restore the behaviour
   found in readline-4.2, add to /etc/inputrc or ~/.inputrc:

       set mark-symlinked-directories on

1. re-enable the paren matching feature in readline-4.1
"""

PROCPS = """The solution is to either:
 - Not put ipv6 keys into /etc/sysctl.d/* or /etc/sysctl.conf
 - Make a init script dependency by adding netbase to the Required-Start
   line in /etc/init.d/procps

pgrep
-----
pgrep is a new program, using the Unix standard name for something that
greps for processes.
"""


def _features(question: str, document: str, pieces: list[str]) -> list[dict[str, float]]:
    pool = sources(hit_in(document, 0, len(document)))
    candidates = []
    for piece in pieces:
        start = document.index(piece)
        candidates.append(Sentence(1, start, start + len(piece), piece))
    return extractive.selection_features(question, candidates, pool, {}, {})


# (question, document, the sentence that repeats a value of the question, the sentence that states the one asked)
NUMBERS = [
    ("How many modules does the Python 3.11 regression test skip on Debian because they are platform-dependent?", PYTHON,
     "This is Python 3.11 packaged for Debian.",
     "Seven packages are skipped since they are platform-dependent and\ncan't be used with Linux."),
    ("DOS 分区表按每扇区 512 字节算，能支持的磁盘最大是多大？", FDISK,
     "如果你使用 cfdisk 或 fdisk 更改了 DOS 分区表的条目，你必须同时使用 dd 命令将该分区的前512个字节清零。",
     "前一种描述很好 - 如果每扇区 512 个字节的情况，这种方式可描述到 2TB 的大小。"),
]


@pytest.mark.parametrize(("question", "document", "repeats", "states"), NUMBERS)
def test_a_number_the_question_writes_is_no_quantity_asked(question, document, repeats, states):
    echo, answer = _features(question, document, [repeats, states])
    assert echo["type"] == 0.0 and echo["type_missing"] == 1.0
    assert echo["amount"] == 0.0
    assert answer["type"] == 1.0 and answer["type_missing"] == 0.0


def test_a_number_the_question_writes_counted_when_switched_off(monkeypatch):
    """UNWRITTEN_NUMBERS off: main's reading, where the repeated 3.11 counts as the quantity."""
    monkeypatch.setattr(extractive, "UNWRITTEN_NUMBERS", False)
    question, document, repeats, _ = NUMBERS[0]
    (echo,) = _features(question, document, [repeats])
    assert echo["type"] == 1.0 and echo["amount"] == 1.0


def test_which_few_files_asks_for_paths_not_a_number():
    """哪几个配置文件: the sentence naming three paths holds the kind asked; "（1）…（2）…" states no amount asked."""
    question = "debian-edu-fsautoresize 会从哪几个配置文件里读取扩容规则？"
    counted, paths = _features(question, EDU, EDU.strip().splitlines())
    assert paths["type"] == 1.0 and paths["type_missing"] == 0.0
    assert counted["type"] == 0.0 and counted["amount"] == 0.0


CUT = [  # (text, the sentence read whole, or None: nothing joined)
    (VIM_NEWS, "In order\n  to disable the loading of defaults.vim, add\n\n    let g:skip_defaults_vim = 1\n\n  to /etc/vim/vimrc(.local)."),
    # a full stop before the example: two sentences, nothing cut
    ("Edit the file below.\n\n    let g:skip_defaults_vim = 1\n\nto disable it, run vim again.", None),
    # the half after the example starts a sentence of its own
    ("In order to disable the loading of defaults.vim, add\n\n    let g:skip_defaults_vim = 1\n\nThe file is read at start.", None),
    # a lead-in with a colon introduces its command (rows.introduced_commands), it is not cut
    (READLINE, None),
    # procps's README.Debian: a list's last item, then a section heading over the next paragraph: no example between
    (PROCPS, None),
]


@pytest.mark.parametrize(("text", "whole"), CUT)
def test_a_sentence_cut_by_its_example_is_read_whole(text, whole):
    spans = quotable_spans(text, "")
    joined = [text[s:e] for s, e in rows.carried(text, spans)]
    if whole is None:
        assert joined == [text[s:e] for s, e in spans]
    else:
        assert whole in joined
        assert len(joined) == len(spans) - 1


def test_the_cut_sentence_is_one_candidate_with_its_example():
    pool = sources(hit_in(VIM_NEWS, 0, len(VIM_NEWS), path="/kb/vim-common/NEWS.Debian", type_="text"))
    question = "How do I stop vim loading defaults.vim for accounts with no vimrc of their own, system-wide?"
    texts = [s.text for s in _candidates(pool, 6, question)]
    assert any("skip_defaults_vim = 1" in t and t.rstrip().endswith("to /etc/vim/vimrc(.local).") for t in texts)
    assert "to /etc/vim/vimrc(.local)." not in texts


@pytest.mark.parametrize("question", [
    "Tab completion on a symlink to a directory no longer adds the trailing slash in bash. Which readline setting brings it back?",
    "Which readline variable restores the trailing slash on symlinked directories?",
])
def test_a_setting_asked_is_quoted_with_the_line_introducing_it(question):
    spans = quotable_spans(READLINE, "")
    quotes = [READLINE[s:e] for s, e in rows.introduced_commands(question, READLINE, spans)]
    assert any(q.startswith("To restore the behaviour") and q.endswith("set mark-symlinked-directories on") for q in quotes)


# The Debian Edu 12 manual in Chinese, 16.1: a step whose commands are a program named by its path.
EDU_L10N = """16.1. 设置多语言桌面环境

支持多种语言需要运行这些命令：

- 运行 dpkg-reconfigure locales （作为 root）并选择语言（UTF-8 变体）。

- 作为 root 运行这些命令来安装相关软件包：

apt update
/usr/share/debian-edu-config/tools/install-task-pkgs
/usr/share/debian-edu-config/tools/improve-desktop-l10n

然后用户会在登录之前能够通过 LightDM 显示管理器选择语言；这应用到 Xfce，LXDE 和 LXQt。
"""


@pytest.mark.parametrize("question", [
    "我们学校有说多种语言的学生，想让 Debian Edu 桌面支持多语言，要执行哪些步骤？",  # 步骤: a procedure, as shape reads it
    "What steps set up a multi-language desktop on Debian Edu?",
    "如何设置多语言桌面环境？",
])
def test_a_step_is_quoted_with_its_commands_named_by_path(question):
    spans = quotable_spans(EDU_L10N, "")
    quotes = [EDU_L10N[s:e] for s, e in rows.introduced_commands(question, EDU_L10N, spans)]
    assert "- 作为 root 运行这些命令来安装相关软件包：\n\napt update\n/usr/share/debian-edu-config/tools/install-task-pkgs\n" \
           "/usr/share/debian-edu-config/tools/improve-desktop-l10n" in quotes


@pytest.mark.parametrize(("line", "command"), [
    ("/usr/share/debian-edu-config/tools/install-task-pkgs", True),
    ("./configure --prefix=/usr", True),
    ("~/bin/backup.sh --full", True),
    ("apt update", True),
    ("/usr/local/lib/python3.11/site-packages/", False),  # a directory, no program
    ("/srv/nfs4 gss/krb5i(rw,sync,fsid=0,crossmnt,no_subtree_check)", False),  # an exports entry, no command
    ("Users will then be able to choose the language.", False),
])
def test_a_command_line_may_name_its_program_by_path(line, command):
    assert (rows._COMMAND_LINE.match(line) is not None) is command


# x11-common's NEWS.Debian: the answer ("xorg") is the one sentence between two the ranking quotes.
X11 = """   The Debian metapackages used to install all of the X Window System have
   been changed with X11R7. They used to be named x-window-system and
   x-window-system-core. Now there is only one metapackage named "xorg". It
   is highly recommended that you install this metapackage in order to get
   a fully working installation of the X Window System.

   Another paragraph follows here, of its own.
"""


def _x11_sentences() -> tuple[list[Sentence], object]:
    pool = sources(hit_in(X11, 0, len(X11), path="/kb/x11-common/NEWS.Debian", type_="text"))
    return _candidates(pool, 6, "Since X11R7, what is the single metapackage that installs the whole X Window System?"), pool


@pytest.mark.parametrize(("quoted", "expected"), [
    # the first, second and fourth sentences quoted: the third, between two of them in the paragraph, is quoted too
    ([0, 1, 3], [0, 1, 2, 3]),
    ([0, 3], [0, 3]),  # two sentences lie between: nothing is filled in
    ([3, 4], [3, 4]),  # a blank line lies between the fourth and the next paragraph's sentence
    ([0, 2], [0, 1, 2]),
])
def test_the_sentence_between_two_quoted_ones_is_quoted(quoted, expected):
    candidates, pool = _x11_sentences()
    assert candidates[2].text == 'Now there is only one metapackage named "xorg".'
    shown = [candidates[i] for i in quoted]
    assert [candidates.index(s) for s in extractive.holes(shown, candidates, pool)] == expected


def test_no_hole_is_filled_when_switched_off(monkeypatch):
    monkeypatch.setattr(extractive, "HOLES", False)
    candidates, pool = _x11_sentences()
    shown = [candidates[i] for i in (0, 1, 3)]
    assert extractive.holes(shown, candidates, pool) == shown

