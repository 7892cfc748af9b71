"""A question's name that the document is named by (its title, file name or folder) is held for its sentences where
the decision measures `missing_name` with docqa.answer.extractive.TITLES on, and recorded as `about_name` either way; a
number, version or identifier is not, and the question's other words are not read there (recorded as `about_matched`).
Real text of the trust corpus: a manual with a title, an HTML book's page, a man page, a package's README.Debian."""

from __future__ import annotations

from dataclasses import replace

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import extract
from .hits import hit_in, sources

# debian-edu-doc-zh-cn/debian-edu-bullseye-manual.html, 14.12 (its title names Debian Edu; no sentence does)
EDU = ("14.12. 安全升级的自动安装\n\nunattended-upgrades 是一个会自动安装安全（和其他）升级的 Debian 软件包。如已安装，该软件包"
       "已预配置来安装安全升级。其日志在 /var/log/unattended-upgrades/ 里获得；而且，一直是 /var/log/dpkg.log 和 /var/log/apt/。\n")
EDU_TITLE, EDU_PATH = "Debian Edu / Skolelinux Bullseye 11 手册", "/doc/debian-edu-doc-zh-cn/debian-edu-bullseye-manual.html"
# lilypond/html/Documentation/learning/working-on-input-files.zh.html, "LilyPond 学习手册: 2.2.2 处理输入文件"
LILY = ("注释块标记表明一大段音乐输入都是注释。所有在 %{ 和 %} 之间的内容都会被忽略。然而，注释块不能‘嵌套’。这意味着你不能把注释块"
        "放在另一个注释块内。如果你这样尝试的话，第一个 %} 会终止 这两个注释块。\n")
# man/zh_CN/man1/ssh.1.gz as the man reader renders it: the program is named by the page's title, SSH(1)
SSH = ("命令行选项有:\n\n-a\n禁止转发认证代理的连接.\n\n-A\n允许转发认证代理的连接. 可以在配置文件中对每个主机单独设定这个参数.\n\n"
       "代理转发须谨慎. 某些用户能够在远程主机上绕过文件访问权限 (由于代理的 UNIX 域 socket), 他们可以通过转发的连接访问本地代理.\n")
# openssh-client/README.Debian.gz: the package is named by the folder the file sits in
X11 = ("X11 Forwarding\n--------------\n\nssh's default for ForwardX11 has been changed to ``no'' because it has\nbeen "
       "pointed out that logging into remote systems administered by\nuntrusted people is likely to open you up to X11 "
       "attacks, so you\nshould have to actively decide that you trust the remote machine's\nroot, before enabling X11.  I "
       "strongly recommend that you do this on a\nmachine-by-machine basis, rather than just enabling it in the default\n"
       "host settings.\n\nIn order for X11 forwarding to work, you need to install xauth on the\nserver. In Debian this is "
       "in the xbase-clients package.\n")

NAMED = [
    # a manual's title
    ("Debian Edu 自动安装安全更新的日志在哪个目录里看？", EDU, EDU_TITLE, EDU_PATH, "14. 一般管理 HowTo > 14.12. 安全升级的自动安装"),
    # an HTML book's page title
    ("LilyPond 的块注释 %{ ... %} 可以一层套一层地嵌套使用吗？", LILY, "LilyPond 学习手册: 2.2.2 处理输入文件",
     "/doc/lilypond/html/Documentation/learning/working-on-input-files.zh.html", "2.2.2 处理输入文件"),
    # the program a man page documents
    ("用 SSH 登录远程主机时，哪个选项允许转发认证代理的连接？", SSH, "SSH(1)", "/usr/share/man/zh_CN/man1/ssh.1.gz",
     "描述 (DESCRIPTION) > 服务器认证"),
    # the package a README.Debian belongs to
    ("Why does Debian's OpenSSH client not forward X11 connections by default?", X11, "README.Debian.gz",
     "/usr/share/doc/openssh-client/README.Debian.gz", ""),
]


def _answer(embedder, question: str, text: str, title: str, path: str, section: str):
    hit = replace(hit_in(text, 0, len(text), path=path, section=section), title=title)
    return extract(question, sources(hit), {}, lambda texts, kind: embedder.embed_batch(texts, kind), threshold=0.0)


@pytest.mark.parametrize("question, text, title, path, section", NAMED)
def test_a_name_the_document_is_named_by_is_not_missing_from_its_sentences(hash_embedder, monkeypatch, question,
                                                                             text, title, path, section):
    def both():
        return (_answer(hash_embedder, question, text, title, path, section),
                _answer(hash_embedder, question, text, "Notes", "/doc/notes/notes.txt", ""))

    # off (the default): the decision is as before, and what the document's name holds is recorded
    named_off, other_off = both()
    assert named_off.features["about_name"] == 1.0 and other_off.features["about_name"] == 0.0
    assert named_off.features["missing_name"] == other_off.features["missing_name"] == 1.0  # no sentence names it
    monkeypatch.setattr(extractive, "TITLES", True)
    named, other = both()
    assert named.chosen[0].text == named_off.chosen[0].text == other.chosen[0].text
    assert named.features["missing_name"] == 0.0 and other.features["missing_name"] == 1.0
    assert named.evidence > named_off.evidence and other.evidence == other_off.evidence


@pytest.mark.parametrize("question, title, path", [
    # the release asked: Debian Edu 12 is not what the manual of 11 (nor, written as a number, any title) says
    ("Debian Edu 12 自动安装安全更新的日志在哪个目录里看？", EDU_TITLE, EDU_PATH),
    ("Debian Edu 12 自动安装安全更新的日志在哪个目录里看？", "Debian Edu / Skolelinux 12 Bookworm 手册",
     "/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.html"),
    # a name the title holds, beside one it does not: the release the question asks about
    ("Debian Edu 从 Bullseye 升级到 Bookworm 后，自动安装安全更新的日志在哪个目录里看？", EDU_TITLE, EDU_PATH),
])
def test_a_number_or_another_name_of_the_question_stays_missing(hash_embedder, monkeypatch, question, title, path):
    monkeypatch.setattr(extractive, "TITLES", True)
    f = _answer(hash_embedder, question, EDU, title, path, "").features
    assert f["missing_name"] == 1.0 and f["about_name"] == 0.0


def test_the_question_s_other_words_are_not_read_in_the_document_s_name(hash_embedder, monkeypatch):
    """manpages-zh-099, a near miss: DU(1) names "du" for every sentence of the page, the answer's and the near miss's
    alike, so `matched` and `missing_rare` do not read it there, TITLES on or not; what reading them would change is
    recorded."""
    monkeypatch.setattr(extractive, "TITLES", True)
    text = "--exclude=PATTERN\n忽略所有与 PATTERN 匹配的文件。\n"
    question = "du --exclude 后面的模式能不能写正则表达式？"
    named = _answer(hash_embedder, question, text, "DU(1)", "/usr/share/man/zh_CN/man1/du.1.gz", "描述")
    other = _answer(hash_embedder, question, text, "Notes", "/doc/notes/notes.txt", "")
    assert named.features["matched"] == other.features["matched"]
    assert named.features["missing_rare"] == other.features["missing_rare"]
    assert named.features["about_matched"] == 1.0 and other.features["about_matched"] == 0.0
