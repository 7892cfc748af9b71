"""Answers whose gold is no sentence (issue 28, `wrong6`): a setting, a format or a path a lead-in shows on a line of its
own ("add the following line to /etc/resolv.conf:" then "    options trust-ad").  The sentence splitter never quotes such
a line, and the lead-in alone says what the line is, not what to write.  Real text of the trust dev set's documentation:
libc6's NEWS.Debian, group(5) in Chinese, perl's README.Debian, libsasl2-2's NEWS.Debian.
"""

from __future__ import annotations

import pytest

from docqa.answer import extractive, rows
from docqa.answer.extractive import _candidates
from docqa.answer.statement import quotable_spans, structure_line

from .hits import hit_in, sources

GLIBC_NEWS = """glibc (2.31-0experimental0) experimental; urgency=medium

  Starting with glibc 2.31, the DNS stub resolver does not blindly trust the
  AD (authenticated data) flag, indicating a DNSSEC validation:

  - By default the name servers and the network path to them are treated as
    untrusted. In this mode, the AD flag is not set in queries, and it is
    automatically cleared in responses, indicating a lack of DNSSEC
    validation.

  Therefore if you trust your name servers, for example because you use a
  locally running validating resolver (e.g. unbound, systemd-resolved or
  dnsmasq), you might want to add the following line to /etc/resolv.conf:

    options trust-ad

 -- Aurelien Jarno <aurel32@debian.org>  Sun, 17 May 2020 15:59:38 +0200
"""
GROUP_ZH = """DESCRIPTION(描述)

/etc/group 是一个ASCII码的文件,它定义了用户所属的组.文件中每行包括一条记录,其格式如下:

group_name:passwd:GID:user_list

字段描述如下:

group_name
组名

GID 组的数字标识.
"""
PERL_README = """suidperl was removed upstream with 5.12, so the perl-suid package which
used to be distributed in Debian has been removed too.

Credits
-------

Previous maintainers of Debian Perl packages:

  Ray Dassen <jdassen@WI.LeidenUniv.NL>,
  Carl Streeter <streeter@cae.wisc.edu>,
"""
SASL_NEWS = """cyrus-sasl2 (2.1.25.dfsg1-5) unstable; urgency=low

    You will need to change your configuration f.e. from:

        auxprop_plugin: mysql

    to

        auxprop_plugin: sql
        sql_engine: mysql
"""


def _shown(text: str) -> list[str]:
    return [text[s:e] for s, e in rows.introduced_lines(text, quotable_spans(text, ""))]


@pytest.mark.parametrize(("text", "lead", "line"), [
    (GLIBC_NEWS, "Therefore if you trust your name servers", "options trust-ad"),  # a setting, indented under its file
    (GROUP_ZH, "文件中每行包括一条记录,其格式如下:", "group_name:passwd:GID:user_list"),  # a format line, 如下
])
def test_a_line_a_lead_in_shows_is_quoted_with_it(text, lead, line):
    quotes = _shown(text)
    assert any(q.startswith(lead) and q.endswith(line) for q in quotes), quotes


@pytest.mark.parametrize(("text", "lead"), [
    (PERL_README, "Previous maintainers of Debian Perl packages:"),  # names listed, nothing to write
    (SASL_NEWS, "You will need to change your configuration f.e. from:"),  # no "following", no "add": the old value
    (GROUP_ZH, "字段描述如下:"),  # its lines are a term and its description, the next a sentence: no displayed line
])
def test_a_lead_in_that_shows_nothing_to_write_stays_alone(text, lead):
    assert not any(q.startswith(lead) for q in _shown(text))


def test_the_lead_in_and_its_line_are_one_candidate():
    pool = sources(hit_in(GLIBC_NEWS, 0, len(GLIBC_NEWS), path="/kb/libc6/NEWS.Debian", type_="text"))
    question = ("We run our own validating resolver (unbound) on every host, and an application needs to see whether "
                "DNS answers were DNSSEC-validated. What do I add to resolv.conf?")
    texts = [s.text for s in _candidates(pool, 6, question)]
    assert any(t.rstrip().endswith("add the following line to /etc/resolv.conf:\n\n    options trust-ad") for t in texts)
    assert not any(t.rstrip().endswith("/etc/resolv.conf:") for t in texts)  # the lead-in is not quoted alone as well


def test_the_lead_in_alone_when_switched_off(monkeypatch):
    monkeypatch.setattr(extractive, "DISPLAYED", False)
    pool = sources(hit_in(GLIBC_NEWS, 0, len(GLIBC_NEWS), path="/kb/libc6/NEWS.Debian", type_="text"))
    texts = [s.text for s in _candidates(pool, 6, "What do I add to resolv.conf to trust the AD flag?")]
    assert not any("options trust-ad" in t for t in texts)
    assert any(t.rstrip().endswith("/etc/resolv.conf:") for t in texts)


# The Debian Edu 12 manual in Chinese, 14.10: a lead-in listing media with slashes, then the command it introduces.
EDU_CDROM = """14.10. 用 CD 或类似的映像升级

插入 CD / DVD / 蓝光光盘 / USB 闪存驱动器并使用 apt-cdrom 命令：

apt-cdrom add

引用 apt-cdrom（8）手册页：
"""


@pytest.mark.parametrize(("line", "kind"), [
    ("插入 CD / DVD / 蓝光光盘 / USB 闪存驱动器并使用 apt-cdrom 命令：", None),  # prose listing alternatives: a lead-in
    ("Copy it to a CD / DVD / USB stick.", None),
    ("Home / Docs / Install", "navigation"),  # a breadcrumb ends in a word
    ("Debian Edu » Manual » Installation", "navigation"),
])
def test_slashes_in_a_sentence_are_no_breadcrumb(line, kind):
    assert structure_line(line) == kind


def test_a_command_introduced_by_a_lead_in_with_slashes_is_quoted_with_it():
    question = "学校没有网络，只拿到了 12.2 的安装光盘，想把 Debian Edu 从 12.1 升到 12.2，先要用哪条命令把光盘加进 APT 的源？"
    quotes = [EDU_CDROM[s:e] for s, e in rows.introduced_commands(question, EDU_CDROM, quotable_spans(EDU_CDROM, ""))]
    assert "插入 CD / DVD / 蓝光光盘 / USB 闪存驱动器并使用 apt-cdrom 命令：\n\napt-cdrom add" in quotes
