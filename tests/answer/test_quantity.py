"""A "how many / how long" question quoted with no quantity abstains (docqa.answer.quantity, docqa.answer.extractive).
The texts are real: the zh_CN man pages of hostnamectl and journalctl (manpages-zh), libtasn1's manual, Git's release
notes, Debian's apt NEWS and PostgreSQL README, the Debian Edu manual, the LXGW WenKai README, Valgrind's manual."""

from __future__ import annotations

import pytest

from docqa.answer import quantity
from docqa.answer.extractive import extract

from .hits import hit_in, sources

# manpages-zh, man1/hostnamectl.1 as the man reader renders it: how the static name is derived, not how long it may be.
HOSTNAMECTL = ("hostnamectl - 控制系统的主机名\n\n"
               '"static"主机名，用于在系统启动时设置内核的主机名，仅可包含 "-","a-z","0-9" 字符，例如"lennarts-laptop"。\n\n'
               "set-hostname NAME\n"
               "设置系统主机名。 如果在设置 pretty 主机名的同时也设置 static/transient 主机名， 那么 static/transient 主机名将根据如下规则"
               '从 pretty 主机名派生而来： 首先将空格替换为 "-" ， 然后将大写字母转换为小写字母， 最后删除不在"-","a-z","0-9"范围内的字符。 '
               "这样可以确保 static/transient 主机名始终保持与 pretty 主机名一致， 同时又不违反自身的命名规则。 "
               "如果仅设置 static/transient 主机名， 则不会对 pretty 主机名产生任何影响。\n")

# manpages-zh, man1/journalctl.1: the -n option, whose default is stated.
JOURNALCTL = ("-n, --lines=\n"
              "限制显示最新的日志行数。 --pager-end 与 --follow 隐含了此选项。 此选项的参数：若为正整数则表示最大行数； "
              '若为 "all" 则表示不限制行数； 若不设参数则表示默认值10行。\n')

# ... and with the sentence before them in the page, which states how many names an update sets (not how long one may be).
THREE = "如果使用了 --static, --transient, --pretty 选项， 那么只更新指定的主机名， 否则同时更新 pretty, static, transient 三个主机名。 "
HOSTNAMECTL_UPDATES = HOSTNAMECTL.replace("设置系统主机名。 ", "设置系统主机名。 " + THREE)
HOSTNAME_LENGTH = "hostnamectl 设置的 static 主机名最长能有多少个字符？"

ASN1 = "How many characters may an ASN.1 identifier have at most in libtasn1?"


@pytest.mark.parametrize(("question", "text", "holds"), [
    # a name, a version, a date, a section number: no quantity
    (ASN1, "ASN1_MAX_NAME_SIZE is the maximum number of characters allowed for an ASN.1 identifier.", False),
    (ASN1, "Abstract Syntax Notation One (ASN.1) library for the GNU system for version 4.19.0, 18 August 2022", False),
    (ASN1, "2.5 Future developments • Add functions for a C code file generation containing equivalent data structures", False),
    ("libtasn1 里一个 ASN.1 标识符最多可以有多少个字符？", "2\n2.1 ASN.1 syntax.", False),
    ("CVE-2023-25652 的 CVSS 评分是多少？", "This release merges the fixes that appear in v2.30.9 to address the security issues "
     "CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007; see the release notes for that version for details.", False),
    ("manpages-zh 软件包一共收录了多少个中文手册页？", "本项目对历史上存留下来的中文手册页进行整理、维护与翻新， 并从 2016 年末开始作为"
     "某些 Linux 发行版中`manpages-zh`软件包的上游。", False),
    ("How long does apt wait for the dpkg lock?", "-- Julian Andres Klode <juliank@ubuntu.com>  Mon, 02 Dec 2019 11:45:52 +0100", False),
    ("用 GOsa² 的 CSV 批量导入，一次最多能导入多少个用户？", "首先做一些测试是一个好主意，最好使用带有几个虚构用户的 CSV 文件，稍后可以删除。", False),
    # a quantity with its unit or none, an address, a number in words
    ("When apt runs from a cron job and dpkg is locked, how long does it wait?",
     "apt(8) now waits for the lock indefinitely if connected to a tty, or for 120 seconds if not.", True),
    ("Debian Edu 的主服务器 tjener 装好后默认用的 IP 地址是多少？", "一个 Skolelinux 网络需要通过选择主服务器设定配置安装一台主服务器"
     "（主机名“tjener”是挪威语“服务器”之意）并预设默认 IP 地址为 10.0.2.2。", True),
    ("霞鹜文楷 GB 版收录了《通用规范汉字表》里的多少个汉字？", "包含《通用规范汉字表》8105 个汉字。", True),
    ("Debian 上第一个 PostgreSQL 集群默认用哪个端口？", 'E. g. if you first install "postgresql-11" on a clean system, the default '
     "11/main cluster will run on port 5432.", True),
    ("hostnamectl 一共管理几种主机名？", "否则同时更新 pretty, static, transient 三个主机名。", True),
    ("How many ways can instrumentation be controlled in Callgrind?", "Afterwards, instrumentation can be controlled in two ways:", True),
    ("How long does apt wait for the dpkg lock when connected to a tty?", "apt(8) now waits for the lock indefinitely if "
     "connected to a tty.", True),  # no end: an answer with no figure
    ("Roughly how much memory does bunzip2 need?", "To support decompression of any file on a 4 megabyte machine, bunzip2 has an "
     "option to decompress using approximately half this amount of memory, about 2300 kbytes.", True),
])
def test_a_quantity_the_question_does_not_write(question, text, holds):
    assert quantity.holds(text, question) is holds


@pytest.mark.parametrize(("question", "asks"), [
    ("How many characters may an ASN.1 identifier have at most in libtasn1?", True),
    ("When apt runs from a cron job and dpkg is locked, how long does it wait?", True),
    ("程序在 Memcheck 下运行，内存占用大约是平时的几倍？", True),  # 几倍: how many times
    ("Debian Edu 12 的安装过程中，配置选项（debconf）页面一共提供了多少种语言？", True),
    ("What is the largest file bzip2 1.0.8 can compress?", True),
    ("What is the highest compression level zstd accepts?", True),
    ("What is the largest city in Poland?", False),  # a name
    ("LilyPond 编译一个输入文件后，一般会生成哪几种格式的输出文件？", False),  # 哪几种: which, not how many
    ("How often does cron wake up?", False),  # a frequency: "every minute" answers it
    ("Which file holds the static host name?", False),
    # 那几 / 这几 / 好几: "those few", "these few", "several"; and 几 outside the clause that asks (dev, `falseabs6`)
    ("LilyPond 的单行注释按惯例应该写在被说明的那几行代码的前面还是后面？", False),
    ("想知道每一行重复出现了几次，uniq 该加哪个参数？", False),  # asks for an option
    ("head 什么参数都不加的时候，默认给我看文件开头的几行？", True),  # 几行 in the clause that asks
    ("diff -u 不写行数时，每处改动前后默认带几行上下文？", True),
    ("tail 默认显示几行", True),  # no question mark: the whole question asks
])
def test_which_questions_ask_for_a_quantity(question, asks):
    assert quantity.asks(question) is asks


def _embed(hash_embedder):
    return lambda texts, kind: hash_embedder.embed_batch(texts, kind)


def test_a_how_many_question_quoted_with_no_quantity_abstains(hash_embedder):
    """hostnamectl's page discusses the static host name (its characters, how it is derived) but not its length: no
    quoted sentence states a quantity, so the answer could not say how many; it abstains at any evidence."""
    pool = sources(hit_in(HOSTNAMECTL, 0, len(HOSTNAMECTL), path="/man/zh_CN/man1/hostnamectl.1.gz", section="", type_="man"))
    question = HOSTNAME_LENGTH
    result = extract(question, pool, {}, _embed(hash_embedder), threshold=0.0)
    assert result.abstained and result.features["quantity_unstated"] == 1.0
    asked = extract("hostnamectl 设置的 static 主机名可以包含哪些字符？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert not asked.abstained and asked.features["quantity_unstated"] == 0.0  # no quantity asked


def test_a_how_many_question_whose_quote_states_one_is_answered(hash_embedder):
    pool = sources(hit_in(JOURNALCTL, 0, len(JOURNALCTL), path="/man/zh_CN/man1/journalctl.1.gz", section="", type_="man"))
    result = extract("journalctl -n 后面不跟数字的话，默认显示最近多少行？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert not result.abstained and result.features["quantity_unstated"] == 0.0
    assert any("10行" in s.text for s in result.chosen)


def test_one_quoted_sentence_that_states_a_quantity_is_enough():
    question = "journalctl -n 后面不跟数字的话，默认显示最近多少行？"
    lines = JOURNALCTL.splitlines()
    assert quantity.unanswered(question, [lines[0]])
    assert not quantity.unanswered(question, [lines[0], lines[1]])
    assert not quantity.unanswered("journalctl -n 是什么意思？", [lines[0]])  # no quantity asked


def test_only_what_the_answer_may_quote_counts(hash_embedder):
    """`quoted`: the picks the answer quotes (3 by default); a quantity in a lower pick answers nothing unless the
    answer may quote it (the chooser is shown every pick)."""
    pool = sources(hit_in(HOSTNAMECTL_UPDATES, 0, len(HOSTNAMECTL_UPDATES), path="/man/zh_CN/man1/hostnamectl.1.gz", section="",
                          type_="man"))
    every = extract(HOSTNAME_LENGTH, pool, {}, _embed(hash_embedder), count=6, threshold=0.0)
    assert [s.text.startswith("如果使用了") for s in every.ranked].index(True) >= 3  # "三个主机名" ranks under the third
    # "三个主机名" counts host names, not characters: no answer to how long one may be, whatever is quoted
    assert every.abstained and every.features["quantity_unstated"] == 1.0
    names = "hostnamectl 一次最多同时更新几个主机名？"
    assert not extract(names, pool, {}, _embed(hash_embedder), count=6, threshold=0.0).features["quantity_unstated"]


@pytest.mark.slow
def test_the_chooser_does_not_take_back_an_abstention_by_the_rule(tmp_path, embedder, monkeypatch):
    """With the small model as a chooser, an abstention under the threshold is taken back when the model backs the best
    sentence (choose.RESCUE_FLOOR); one by the quantity rule is not: that sentence states no quantity, whatever the
    model says.  A real knowledge base and the scripted server on loopback at the LLM boundary."""
    from docqa.answer import choose
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

    monkeypatch.setattr(choose, "RESCUE_FLOOR", 0.0)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "hostnamectl.md").write_text(HOSTNAMECTL, encoding="utf-8")
    with ScriptedServer([{"text": "1"}]) as server:
        llm = {"provider": "openai", "base_url": server.base_url, "model": "qwen2.5-coder-1.5b", "timeout": 120, "max_retries": 0}
        with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), answer={"choose_sentence": True}, llm=llm), embedder=embedder) as kb:
            kb.add([tmp_path / "docs"])
            answer = kb.ask(HOSTNAME_LENGTH)
    assert not answer.answerable and answer.retrieval.evidence_features["quantity_unstated"] == 1.0
    assert server.requests == []  # not asked


@pytest.mark.slow
def test_the_chooser_is_shown_every_pick_before_the_rule_abstains(tmp_path, embedder):
    """With the small model as a chooser, the rule reads every pick the model is shown, not the three an extractive
    answer quotes; a quantity of another kind than the one asked, under the third, answers nothing there either."""
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

    def number_of(body: dict) -> dict:
        line = next(x for x in body["messages"][-1]["content"].splitlines() if "三个主机名" in x)
        return {"text": line[1 : line.index("]")]}

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "hostnamectl.md").write_text(HOSTNAMECTL_UPDATES, encoding="utf-8")
    with ScriptedServer([number_of]) as server:
        llm = {"provider": "openai", "base_url": server.base_url, "model": "qwen2.5-coder-1.5b", "timeout": 120, "max_retries": 0}
        with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), answer={"choose_sentence": True}, llm=llm), embedder=embedder) as kb:
            kb.add([tmp_path / "docs"])
            answer = kb.ask(HOSTNAME_LENGTH)
            without = KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}), embedder=embedder)
            with without:
                extractive = without.ask(HOSTNAME_LENGTH)
    # "三个主机名", under the third pick, counts host names and not characters: no pick states the length asked, so
    # the rule abstains before the model is asked, as the extractive answer does
    assert not server.requests and not answer.answerable and answer.retrieval.evidence_features["quantity_unstated"] == 1.0
    assert not extractive.answerable and extractive.retrieval.evidence_features["quantity_unstated"] == 1.0


# Valgrind's manual (Callgrind, Nulgrind), a Debian Edu note, systemd's UIDS-GIDS.md, the zh_CN man pages of hostnamectl
# and journalctl, bzip2's manual, the LXGW WenKai README: a quantity of another kind than the one asked is no answer.
SLOWDOWN = "At the other end of the spectrum, the minimal tool, called Nulgrind, adds no instrumentation at all and causes in total " \
    '"only" about a 4 times slowdown.'
DISK = "请注意如果安装这个软件包大概需要 2 GiB 的磁盘空间。"


@pytest.mark.parametrize(("question", "text", "holds"), [
    # how many times: a multiple ("4 times", "5x", 倍), not a size or a version
    ("在 Callgrind 完整插桩下，程序大概会慢多少倍？", DISK, False),
    ("在 Callgrind 完整插桩下，程序大概会慢多少倍？", "At present, Helgrind only properly supports glibc-2.3 or later.", False),
    ("How many times slower does a program run under Nulgrind?", SLOWDOWN, True),
    ("程序在 Memcheck 下运行，内存占用大约是平时的几倍？", "(which involves a slow-down of about 5x, less than that of most tools)", True),
    # how many of a thing: that thing or a bare number, not another counted thing or a time
    ("hostnamectl 设置的 static 主机名最长能有多少个字符？", THREE, False),
    ("hostnamectl 一共管理几种主机名？", THREE, True),
    ("霞鹜文楷 GB 版收录了《通用规范汉字表》里的多少个汉字？", "包含《通用规范汉字表》8105 个汉字。", True),
    ("journalctl -n 后面不跟数字的话，默认显示最近多少行？", '若不设参数则表示默认值10行。', True),
    ("systemd 系统上 tty 组的 GID 必须是多少？", "There's one exception however: the `tty` group must have the GID 5.", True),
    # how long: a time or a bare figure, not a size or a count of things
    ("hostnamectl 设置的主机名多久生效？", THREE, False),
    ("How long does apt wait for the dpkg lock?", DISK, False),
    ("When apt runs from a cron job and dpkg is locked, how long does it wait?",
     "apt(8) now waits for the lock indefinitely if connected to a tty, or for 120 seconds if not.", True),
    # how long can …: a limit, a time or a length ("64 characters", "2KB"), not a multiple
    ("How long can a static hostname be?", "The static hostname is limited to 64 characters.", True),
    ("How long can a commit message line be?", "Lines longer than 2KB are ignored.", True),
    ("How long can a commit message line be?", "It runs about 5x slower.", False),
    # how large: a size, a share or a bare figure, not a time
    ("How large is the queue of freed blocks Memcheck keeps by default?", "--freelist-vol=<number> [default: 20000000]\n\n"
     "When the client program releases memory using free (in C) or delete (C++), that memory is not immediately made "
     "available for re-allocation.", True),
    ("journald 默认最多让日志占用多少磁盘空间？", "SystemMaxUse= 与 RuntimeMaxUse= 的默认值是10%空间与4G空间两者中的较小者；", True),
    ("How large is the queue of freed blocks Memcheck keeps by default?",
     "apt(8) now waits for the lock indefinitely if connected to a tty, or for 120 seconds if not.", False),
])
def test_a_quantity_of_the_kind_asked(question, text, holds):
    assert quantity.holds(text, question) is holds


@pytest.mark.parametrize(("question", "measure"), [
    ("How many times slower does a program run under full Callgrind instrumentation?", "multiple"),
    ("程序在 Memcheck 下运行，内存占用大约是平时的几倍？", "multiple"),
    ("How large is the queue of freed blocks Memcheck keeps by default?", "size"),
    ("开启持久化以后，journald 默认最多占用多少磁盘空间？", "size"),
    ("hostnamectl 设置的 static 主机名最长能有多少个字符？", "count"),
    ("How many frames does Valgrind show in a stack trace by default?", "count"),
    ("apt 在没有终端（比如 cron 里）时，遇到 dpkg 锁会等多久？", "duration"),
    ("How often does cron wake up?", "frequency"),
    ("How long can a static hostname be?", "length"),
    ("How long are backups kept?", "duration"),
    ("一行最多可以多长时间不刷新？", "duration"),
    ("Debian Edu 的主服务器 tjener 装好后默认用的 IP 地址是多少？", "number"),
])
def test_what_a_quantity_question_measures(question, measure):
    assert quantity.measure(question) == measure


APT_NEWS = "apt(8) now waits for the lock indefinitely if connected to a tty, or for 120 seconds if not."
APT_GET = "How long does apt-get (not apt) wait for the dpkg lock when it has no terminal?"


@pytest.mark.parametrize(("question", "text", "holds"), [
    # Debian's apt NEWS: the figure is apt's, and the question sets apt aside
    (APT_GET, APT_NEWS, False),
    ("apt-get 而不是 apt 在没有终端时会等 dpkg 锁多久？", APT_NEWS, False),
    ("When apt runs from a cron job without a terminal and dpkg is locked, how long does it wait?", APT_NEWS, True),
    # a bug number closed by an entry is no quantity
    (APT_GET, "Credentials in apt_auth.conf(5) now only apply to https and tor+https\n  sources to avoid them being leaked over "
     "plaintext (Closes: #945911).", False),
])
def test_a_quantity_of_the_subject_asked(question, text, holds):
    assert quantity.holds(text, question) is holds


# Valgrind's FAQ (and its core manual, SLOWDOWN): the slowdowns they give are for running with no instrumentation.
CALLGRIND = "How many times slower does a program run under full Callgrind instrumentation?"
FAQ_5X = ("It is possible to achieve something like this by running your program without any instrumentation (which involves "
          "a slow-down of about 5x, less than that of most tools), and then adding instrumentation once you get to a point of interest.")


@pytest.mark.parametrize(("question", "text", "holds"), [
    (CALLGRIND, FAQ_5X, False),
    (CALLGRIND, SLOWDOWN, False),  # Nulgrind "adds no instrumentation at all"
    # the question asks about the case without it itself: the figure is the one asked for
    ("How many times slower does a program run under Valgrind without any instrumentation?", FAQ_5X, True),
])
def test_a_quantity_of_the_case_asked(question, text, holds):
    assert quantity.holds(text, question) is holds


# systemd's UIDS-GIDS.md: the one group whose GID is fixed is `tty`; the page never names the render group.
UIDS_GIDS = ("## Special `systemd` GIDs\n\n"
             "`systemd` defines no special UIDs beyond what Linux already defines (see\nabove). However, it does define some "
             "special group/GID assignments, which are\nprimarily used for `systemd-udevd`'s device management.\n\n"
             "Note that the actual GID numbers assigned to these groups do not have to be\nconstant beyond a specific system. "
             "There's one exception however: the `tty`\ngroup must have the GID 5. That's because it must be encoded in the "
             "`devpts`\nmount parameters during earliest boot, at a time where NSS lookups are not\npossible.\n")
TTY = "There's one exception however: the `tty`\ngroup must have the GID 5."
# Git 2.30.6's release notes: an item names its CVE once, in a paragraph above the sentence that states the limit.
GIT_SHELL = "`git shell` is taught to refuse interactive commands that are\n   longer than 4MiB in size."
GIT_2306 = (" * CVE-2022-39260:\n   An overly-long command string given to `git shell` can result in\n   overflow in `split_cmdline()`, "
            "leading to arbitrary heap writes and\n   remote code execution.\n\n   " + GIT_SHELL + "\n")

# apt's NEWS.Debian, two entries of one chunk: the lock, and dpkg's PATH.
APT_ENTRIES = ("apt (1.9.11) experimental; urgency=medium\n\n  apt(8) now waits for the lock indefinitely if connected to a tty, or\n"
               "  for 120 seconds if not.\n\n -- Julian Andres Klode <jak@debian.org>  Wed, 26 Feb 2020 20:30:33 +0100\n\n"
               "apt (1.8.0~alpha3) unstable; urgency=medium\n\n  The PATH for running dpkg is now configured by the option DPkg::Path,\n"
               '  and defaults to "/usr/sbin:/usr/bin:/sbin:/bin".\n')

@pytest.mark.parametrize(("question", "text", "passage", "holds"), [
    # across languages: a quantity in a passage that never writes a language-neutral token of the question is another's
    ("systemd 系统上 render 组的 GID 是多少？", TTY, UIDS_GIDS, False),
    ("systemd 系统上 tty 组的 GID 必须是多少？", TTY, UIDS_GIDS, True),
    ("修复 CVE-2022-39260 之后，git shell 允许的交互命令最长是多少？", GIT_SHELL, GIT_2306, True),  # the CVE: in the passage
    ("修复 CVE-2022-39253 之后，git shell 允许的交互命令最长是多少？", GIT_SHELL, GIT_2306, False),
    # Debian's apt NEWS never says cron: the question names it in an aside, as an example, not as its subject
    ("apt 在没有终端（比如 cron 里）时，遇到 dpkg 锁会等多久？", APT_NEWS, APT_ENTRIES, True),
    ("cron 里运行的 apt 遇到 dpkg 锁会等多久？", APT_NEWS, APT_ENTRIES, False),
])
def test_a_quantity_across_languages_in_a_passage_that_names_the_subject(question, text, passage, holds):
    from docqa.answer import neutral

    assert quantity.holds(text, question, passage, neutral.tokens(question, [passage])) is holds
    assert quantity.holds(text, question) is True  # without the question's tokens: any quantity, as before


def test_a_quantity_question_across_languages_abstains_on_another_subjects_figure(hash_embedder):
    """The `tty` group's GID 5 answers the question on the tty group, in Chinese, and not the one on the render group."""
    pool = sources(hit_in(UIDS_GIDS, 0, len(UIDS_GIDS), path="/usr/share/doc/systemd/UIDS-GIDS.md.gz", section="Special `systemd` GIDs"))
    render = extract("systemd 系统上 render 组的 GID 是多少？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert render.abstained and render.rule == "quantity_unstated"
    tty = extract("systemd 系统上 tty 组的 GID 必须是多少？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert not tty.abstained and any("GID 5" in s.text for s in tty.chosen)


@pytest.mark.parametrize(("question", "asks", "measure"), [
    ("What is the default HTTP timeout apt uses when downloading packages?", True, "duration"),
    ("What's the retry delay of the fetcher?", True, "duration"),
    ("What is the timeout option called?", False, "number"),
    ("How many megabytes per second does bzip2 -9 compress on a typical machine?", True, "rate"),
    ("LilyPond 生成的 MIDI 默认按每分钟多少拍来播放？", True, "rate"),
])
def test_a_timeout_by_its_name_and_a_rate(question, asks, measure):
    assert quantity.asks(question) is asks
    assert quantity.measure(question) == measure


# bzip2's manual: sizes and a ratio, no speed.
BZIP2_RATE = "How many megabytes per second does bzip2 -9 compress on a typical machine?"


@pytest.mark.parametrize(("question", "text", "holds"), [
    (BZIP2_RATE, "bzip2recover versions prior to 1.0.2 used 32-bit integers to represent bit positions in compressed files, so it "
     "could not handle compressed files more than 512 megabytes long.", False),
    (BZIP2_RATE, "worst-case and average-case compression time is in the region of 10:1.", False),
    (BZIP2_RATE, "On a typical machine bzip2 -9 compresses at about 3 MB/s.", True),
    ("LilyPond 生成的 MIDI 默认按每分钟多少拍来播放？", "MIDI 默认速度为每分钟 60 拍。", True),
    # Debian's apt NEWS: no figure at all for the HTTP timeout
    ("What is the default HTTP timeout apt uses when downloading packages?", 'To enable the behavior for other tools, you can set '
     '"APT::Keep-Downloaded-Packages" to false.', False),
])
def test_a_rate_and_a_timeout_are_stated_or_not(question, text, holds):
    assert quantity.holds(text, question) is holds
