"""A rare exact token that names a file is no reason to put all of that file ahead of another file's text
that holds the token (retriever `_keep_exact`: a chunk's weight is its text's rare tokens plus its name's).

The case from the trust dev set: an English question about `logind.conf` over a knowledge base with the
Chinese man page `logind.conf.5` (sections that mostly never write the file's name) and the English
README.Debian whose text holds `logind.conf` and answers.  Real files, real SQLite, BM25 (no model needed:
the exact-token order is applied in every mode).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

SECTIONS = {  # four chunks: the token stays rare (retriever.RARE_CHUNKS) in this small knowledge base
    "NAME": "logind.conf, logind.conf.d - 登陆管理器配置文件",
    "描述": "上述配置文件用于控制 systemd-logind.service(8) 登陆管理器的行为。",
    "KillUserProcesses=": "接受一个布尔值。 设置在用户退出登录会话时，是否杀死该用户的进程。",
    "跋": "本页面中文版由中文 man 手册页计划提供。 翻译人员：金步国",
}
MAN = "# LOGIND.CONF\n\n" + "\n\n".join(f"## {title}\n\n{body}\n\n{body}" for title, body in SECTIONS.items()) + "\n"
README = ("systemd for Debian\n==================\n\n"
          "Killing user processes at logout\n--------------------------------\n\n"
          "The default for KillUserProcesses in /etc/systemd/logind.conf is set to \"yes\" in upstream systemd, "
          "to kill all processes of a session when its user logs out. On Debian the default is \"no\", so "
          "programs such as screen and tmux that should keep running after a logout survive it.\n\n"
          "Enabling persistent logging in journald\n---------------------------------------\n\n"
          "To enable persistent logging, create /var/log/journal and the journal is kept across boots.\n")
FILES = {"man/zh_CN/man5/logind.conf.5.md": MAN, "systemd/README.Debian": README}
QUESTION = ("I start long jobs inside tmux on a Debian box over SSH and then log out. A colleague warned me that systemd "
            "kills every process of a session at logout. Will my tmux session survive on Debian with the default logind.conf?")


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact_naming")
    for rel, text in FILES.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings) as base:
        report = base.add([root / "docs"])
        assert len(report.added) == len(FILES) and not report.failed
        yield base


def test_the_text_holding_the_token_leads_the_chunks_only_named_by_it(kb):
    hits = kb.search(QUESTION, top_k=20)
    names = [Path(h.path).name for h in hits]
    readme = names.index("README.Debian")
    assert "KillUserProcesses" in hits[readme].text
    named_only = [i for i, h in enumerate(hits) if names[i] != "README.Debian" and "logind.conf" not in h.text]
    assert named_only and all(readme < i for i in named_only), names  # a chunk only named by the token comes after
    assert [i for i, h in enumerate(hits) if "logind.conf" in h.text + names[i]][0] == 0  # the token still decides first


def test_a_chunk_named_and_holding_the_token_still_leads(kb):
    hits = kb.search("What is logind.conf?", top_k=5)
    assert Path(hits[0].path).name == "logind.conf.5.md" and "logind.conf" in hits[0].text
