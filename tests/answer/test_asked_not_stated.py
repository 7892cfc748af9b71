"""Near misses whose quoted sentences hold a value, but not the one asked (issue 28, item 2, `nearmiss4`): a release a
change *will* come in, answered by the heading of the notes that announce it; a release the question writes itself;
a default, answered by an example's figure; "how many", asked of a thing that is also a file; an exit status; "one of
the packages" read as a count.  The texts are real: make's and grep's NEWS.Debian, Git's 2.37.2 release notes,
Valgrind's BBV manual, dbus's and libsasl2's README.Debian, the Chinese gzip and umount manual pages."""

from __future__ import annotations

import pytest

from docqa.answer import option, quantity, release
from docqa.answer.extractive import extract
from docqa.answer.release import Label

from .hits import hit_in, sources

# make/NEWS.Debian.gz: the 3.82-1 entry announces that a later release may stop sorting wildcard results.
MAKE = """make-dfsg (3.82-1) experimental; urgency=low

  * New upstream release. A complete list of bugs fixed in this version is
    available here:  http://sv.gnu.org/bugs/index.php?group=make&report_id=111&fix_release_id=104&set=custom
  * WARNING: Future backward-incompatibility!
    Wildcards are not documented as returning sorted values, but up to and
    including this release the results have been sorted and some makefiles
    are apparently depending on that.  In the next release of GNU make,
    for performance reasons, we may remove that sorting.  If your
    makefiles require sorted results from wildcard expansions, use the
    $(sort ...)  function to request it explicitly.
"""

# git/RelNotes/2.37.2.txt: fixes to the vimdiff driver, and no Vim version.
GIT_2372 = """Git 2.37.2 Release Notes
========================

This primarily is to backport various fixes accumulated on the 'master'
front since 2.37.1.

Fixes since v2.37.1
-------------------

 * Variable quoting fix in the vimdiff driver of "git mergetool".

 * Recent update to vimdiff layout code has been made more robust
   against different end-user vim settings.
"""


def _embed(hash_embedder):
    return lambda texts, kind: hash_embedder.embed_batch(texts, kind)


@pytest.mark.parametrize(("question", "future"), [
    ("In which GNU make release will wildcard results stop being sorted?", True),
    ("In which Debian release of grep will the egrep and fgrep programs be dropped?", True),
    ("Which GCC major version will become the default compiler for Debian trixie?", True),
    ("Debian 专有的 rgrep 命令已经过时了，会在哪个 grep 版本里彻底删掉？", True),
    ("make 说以后 POSIX 模式下后缀规则的行为会成为唯一行为，具体是哪个 make 版本？", True),
    ("In which grep release did egrep start to warn that it is obsolescent?", False),  # done: its heading names it
    ("Which version of git will I get from bookworm-backports?", False),  # "will", but no change to come
    ("霞鹜文楷是在哪个版本加上越南语支持的？", False),
])
def test_a_release_question_that_asks_for_a_change_still_to_come(question, future):
    assert release.asks_future(question) is future


@pytest.mark.parametrize(("question", "found", "asked"), [
    # the notes' own heading names the release a fix came in ...
    ("In which Git release was the variable quoting in git mergetool's vimdiff driver fixed?",
     Label("Git 2.37.2 Release Notes", "2.37.2"), True),
    # ... not the Vim versions a question about those very notes asks for
    ("Which Vim and Neovim versions does git mergetool's vimdiff driver support after the 2.37.2 layout fixes?",
     Label("Git 2.37.2 Release Notes", "2.37.2"), False),
    ("In which Debian release will distutils be dropped from the python3.11 packages?", Label("Python 3.11 for Debian", "3.11"), False),
    # a change announced in the 3.82-1 entry comes in a later release than 3.82-1
    ("In which GNU make release will wildcard results stop being sorted?", Label("make-dfsg (3.82-1) experimental; urgency=low", "3.82-1"),
     False),
    ("Which make release warns that wildcard sorting may be removed?", Label("make-dfsg (3.82-1) experimental; urgency=low", "3.82-1"),
     True),
    ("Which make release warns that wildcard sorting may be removed?", None, False),
])
def test_what_names_the_release_asked(question, found, asked):
    assert release.names_asked(question, found) is asked


PATCH = "In which Debian release will patch stop accepting the old --global-reject-file spelling?"


@pytest.mark.parametrize(("question", "text", "nothing"), [
    # patch/NEWS.Debian.gz: a release by its code name
    (PATCH, "The old syntax is still supported, but will be removed for the Debian release following Squeeze.", False),
    (PATCH, "In the next release of GNU make,\n    for performance reasons, we may remove that sorting.", True),
    ("Will patch keep the old --global-reject-file spelling after Squeeze?",  # a code name the question writes itself
     "The old syntax is still supported, but will be removed for the Debian release following Squeeze.", True),
])
def test_a_debian_release_named_by_its_code_name(question, text, nothing):
    assert release.names_nothing(question, text) is nothing


def test_a_change_still_to_come_quoted_under_the_heading_of_the_notes_that_announce_it_abstains(hash_embedder):
    """make's 3.82-1 entry says the *next* release may stop sorting: no release answers "will stop"; the entry's own
    heading answers which release warned of it."""
    pool = sources(hit_in(MAKE, 0, len(MAKE), path="/usr/share/doc/make/NEWS.Debian.gz", section="", type_="text"))
    future = extract("In which GNU make release will wildcard results stop being sorted?", pool, {}, _embed(hash_embedder),
                     threshold=0.0)
    assert future.abstained and future.rule == "release_unnamed"
    warned = extract("Which make release first warned that wildcard results may stop being sorted?", pool, {},
                     _embed(hash_embedder), threshold=0.0)
    assert not warned.abstained and not warned.rule


def test_a_release_the_question_writes_itself_answers_nothing(hash_embedder):
    """2.37.2's notes name no Vim version: their heading (2.37.2) is what the question already says."""
    pool = sources(hit_in(GIT_2372, 0, len(GIT_2372), path="/usr/share/doc/git/RelNotes/2.37.2.txt", section="", type_="text"))
    versions = extract("Which Vim and Neovim versions does git mergetool's vimdiff driver support after the 2.37.2 layout fixes?",
                       pool, {}, _embed(hash_embedder), threshold=0.0)
    assert versions.abstained and versions.rule == "release_unnamed"
    fixed = extract("In which Git release was the variable quoting in git mergetool's vimdiff driver fixed?", pool, {},
                    _embed(hash_embedder), threshold=0.0)
    assert not fixed.abstained and not fixed.rule


@pytest.mark.parametrize(("question", "asks"), [
    ("What exit status does umount return when the filesystem is busy?", True),
    ("What exit code does GNU realpath return when a leading path component does not exist?", True),
    ("gzip 出错时的退出状态是多少？", True),
    ("How many characters long may a polkit .rules file name be before polkitd ignores it?", True),  # names a file too
    ("What does umount do when the filesystem is busy?", False),
    ("Which file holds the polkit rules of local administrators?", False),
])
def test_an_exit_status_and_how_many_of_anything_ask_for_a_quantity(question, asks):
    assert quantity.asks(question) is asks


@pytest.mark.parametrize(("question", "text", "holds"), [
    # an exit status: a number, or success and failure said in words
    ("gzip 出错时的退出状态是多少？", "正常的退出状态为0；如果出现错误，退出状态为1。如果出现警告信息，退出状态为2。", True),
    ("What exit status does shutdown return on failure?", "返回值为 0 表示成功， 非零返回值表示失败代码。", True),
    ("What exit status does umount return when the filesystem is busy?", "umount 可以卸除当前挂载在文件层次目录中的文件系统。", False),
    # "one of the packages" says which, not how many
    ("How many mechanisms does Debian's libsasl2-modules package enable by default?",
     "IMPORTANT:\nYou MUST install one of the libsasl2-modules* packages for SASL to work with\nserver programs.", False),
    ("How many threads does the server start?", "The server starts one thread per CPU.", True),
    # an error described is no status
    ("sha256sum -c 校验时如果有文件对不上，命令的退出码是多少？", "如果校验失败，sha256sum 会输出一条警告。", False),
])
def test_a_status_is_stated_and_one_of_is_no_count(question, text, holds):
    assert quantity.holds(text, question) is holds


@pytest.mark.parametrize(("question", "text", "names", "holds"), [
    # an example's figure is not the default
    ("How many intervals does SimPoint pick by default when it clusters a BBV file?",
     "In this example we specify 5 intervals with the -k 5 option.", "bbv-manual.html", False),
    ("What is the default limit on incomplete (not yet authenticated) connections that dbus-daemon --system accepts?",
     "As a result, dbus 1.8.8 also reduced the auth_timeout from 30 seconds\nto 5 seconds to mitigate this delay.",
     "dbus/README.Debian", False),
    # a sentence that says it is the default, or under a heading that does
    ("Debian Edu 的主服务器 tjener 装好后默认用的 IP 地址是多少？",
     "一个 Skolelinux 网络需要通过选择主服务器设定配置安装一台主服务器（主机名“tjener”是挪威语“服务器”之意）并预设默认 IP 地址为 10.0.2.2。",
     "debian-edu-bookworm-manual.html", True),
    ("How large is the queue of freed blocks Memcheck keeps by default?",
     "--freelist-vol=<number> [default: 20000000]", "mc-manual.html", True),
    # the sentence itself: a default its chunk states for something else is not this figure's
    ("How many intervals does SimPoint pick by default when it clusters a BBV file?",
     "In this example we specify 5 intervals with the -k 5 option.", "bbv-manual.html\nThe default output file is bb.out.<pid>.",
     False),
    # a default written as the case where nothing is given
    ("diff -u 不写行数时，每处改动前后默认带几行上下文？",
     "--unified[=lines] 使用前后关系格式输出，显示以指定行数 (一个整数), 或者是三行（当行数没有给出时.", "diff.1.gz", True),
    # "unless I change it" asks for what the documentation calls common, not for a figure it must call the default
    ("How many instructions long is each interval in the basic block vector output unless I change it?",
     "This is commonly done every 100 million instructions; the --interval-size option can be used to change this.",
     "bbv-manual.html", True),
    # a question that asks no default takes the example's figure
    ("How many intervals does the example ask SimPoint for?", "In this example we specify 5 intervals with the -k 5 option.",
     "bbv-manual.html", True),
])
def test_a_default_asked_for_is_stated_as_the_default(question, text, names, holds):
    assert quantity.holds(text, question, names) is holds


# man/zh_CN/man8/fsck.8.gz, as the knowledge base chunks it: fsck's options, one of them a progress bar.
FSCK = """-C
如果文件系统检查器支持的话(当前只有ext2)，显示进度条。fsck 将管理各文件系统检查器，使得同一时间它们中只能有一个可以显示进度条。

-N
不执行，仅仅显示将执行的操作。

-T
启动时不显示标题。
"""


@pytest.mark.parametrize(("question", "paths", "elsewhere"), [
    # mv has no progress option: fsck's is another command's
    ("用 mv 把几十 G 的文件挪到另一块硬盘，能不能让它显示进度条？是哪个选项？", ["/usr/share/man/zh_CN/man8/fsck.8.gz"], True),
    ("sed -i 改了一个符号链接指向的文件后，有没有办法让 sed 保留原文件的 SELinux 上下文？是哪个选项？",
     ["man/zh_CN/man1/ln.1.gz", "man/zh_CN/man1/ln.1.gz"], True),
    # the command's own page, or a page named after it (ssh_config is ssh's, git-rebase git's)
    ("fsck 检查时想显示进度条，用哪个选项？", ["/usr/share/man/zh_CN/man8/fsck.8.gz"], False),
    ("Which ssh option forwards the authentication agent?", ["/usr/share/man/man5/ssh_config.5.gz"], False),
    ("Which git option keeps merge commits when rebasing?", ["/usr/share/man/man1/git-rebase.1.gz"], False),
    # one quote from the command's page is enough; a file that is no manual page says nothing of whose option it is
    ("用 mv 覆盖前想先确认，用哪个选项？", ["man/zh_CN/man8/fsck.8.gz", "man/zh_CN/man1/mv.1.gz"], False),
    ("Which option makes mv ask before overwriting?", ["/usr/share/doc/coreutils/NEWS.Debian.gz"], False),
    # a question that asks which command as well, or names none
    ("想看每个子目录占多少空间，用什么命令加什么参数？", ["man/zh_CN/man1/du.1.gz"], False),
    ("复制文件时想显示进度条，用哪个选项？", ["man/zh_CN/man8/fsck.8.gz"], False),
])
def test_an_option_quoted_from_another_commands_page(question, paths, elsewhere):
    assert option.unanswered(question, paths) is elsewhere


def test_an_option_of_another_command_abstains(hash_embedder):
    """fsck(8)'s progress bar is no option of mv: abstain at any evidence; asked of fsck, it answers."""
    pool = sources(hit_in(FSCK, 0, len(FSCK), path="/usr/share/man/zh_CN/man8/fsck.8.gz", section="", type_="text"))
    mv = extract("用 mv 把几十 G 的文件挪到另一块硬盘，能不能让它显示进度条？是哪个选项？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert mv.abstained and mv.rule == "option_elsewhere"
    fsck = extract("fsck 检查文件系统时想显示进度条，用哪个选项？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert not fsck.abstained and not fsck.rule and any("进度条" in s.text for s in fsck.chosen)
