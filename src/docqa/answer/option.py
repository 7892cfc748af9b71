"""A question that asks which option of a command, quoted only from another command's manual page: a near miss
(issue 28, item 2).

"用 mv 把几十 G 的文件挪到另一块硬盘，能不能让它显示进度条？是哪个选项？" finds fsck(8)'s "-C 如果文件系统检查器支持的话 …，显示进度条。",
"有没有办法让 sed 在原地修改后保留原文件的权限和 SELinux 上下文？是哪个选项？" finds ln(1)'s options: the words of the question
are there, the command is not, because mv(1) has no progress option and sed(1) none that keeps the context.  A manual
page documents one command (its file name: `man1/fsck.8.gz` documents fsck, `man5/journald.conf.5.gz` journald.conf,
`man5/ssh_config.5.gz` ssh's configuration); an option quoted from it is that command's.  When the question names a
command (a word in lower-case Latin letters: `mv`, `sed`, `git`) and asks which option or flag (`asks`), and every
quoted sentence comes from the page of a command the question does not write (neither the page's name nor its first
part: `ssh_config` is ssh's, `git-rebase` git's), none states the option asked, and the extractive answerer abstains
whatever its evidence, as it does on a quantity no quoted sentence states (docqa.answer.quantity).  A question that
asks which command as well ("用什么命令加什么参数？") may be answered by another command's page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.text.segment import STOPWORDS

ASKS = re.compile(r"哪个选项|哪个参数|什么选项|什么参数|哪个开关|\b(?:which|what)\s+(?:[\w-]+\s+){0,2}(?:options?|flags?|switch(?:es)?)\b",
                  re.IGNORECASE)
_COMMAND_ASKS = re.compile(r"什么命令|哪个命令|什么工具|哪个工具|什么程序|哪个程序"
                           r"|\b(?:which|what)\s+(?:[\w-]+\s+){0,2}(?:commands?|tools?|programs?|utilit(?:y|ies))\b", re.IGNORECASE)
# A manual page's file: .../man8/fsck.8.gz, man5/journald.conf.5, man1/git-rebase.1.gz
_PAGE = re.compile(r"(?:^|/)man\d\w*/([^/]+?)\.\d\w*(?:\.gz)?$")
_COMMAND = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:[._+-][a-z0-9]+)*(?![\w-])")  # a word in lower-case Latin letters
_PARTS = re.compile(r"[._+-]")


def page(path: str) -> str | None:
    """The command (or file) a manual page documents, from its path; None for a file that is no manual page."""
    m = _PAGE.search(path.replace("\\", "/"))
    return m.group(1).lower() if m else None


def asks(question: str) -> bool:
    """Whether `question` asks which option of a command it names (and not which command as well)."""
    return ASKS.search(question) is not None and _COMMAND_ASKS.search(question) is None and bool(_commands(question))


def unanswered(question: str, paths: Iterable[str]) -> bool:
    """A question that asks which option of a command it names, and every quoted sentence's file (`paths`) is the manual
    page of a command it does not write (see the module docstring)."""
    if not asks(question):
        return False
    written = _commands(question)
    pages = [page(p) for p in paths]
    return bool(pages) and all(p is not None and p not in written and _PARTS.split(p)[0] not in written for p in pages)


def _commands(question: str) -> set[str]:
    """The lower-case Latin words of `question` that may name a command (`mv`, `sed`, `git`; not "the", "a")."""
    return {w for w in _COMMAND.findall(question) if w not in STOPWORDS and len(w) > 1}

