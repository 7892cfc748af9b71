"""No-model answers shaped like answers: a typed question leads with a token of its type, a procedure
question gets its steps whole and in order.  Real files, real SQLite, the bundled embedder."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docqa.answer.shape import asks_for, holds_type, shape
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

KEYS = """# Signing keys

Signing keys are rotated every month by the release manager. The current keys are stored in /etc/app/keys.pem, readable by root only.

## Rotating the signing key

To rotate the signing key:

1. Generate a new key with `keygen --new`.
2. Copy the key to /etc/app/keys.pem and keep the old one beside it.
3. Restart the service with `systemctl restart app`.

The old key stays valid for one day after a rotation, so clients have time to fetch the new one.
"""
ENV = """# Environment

The service reads its settings at start. The log directory is set by APP_LOG_DIR and defaults to /var/log/app.
"""


@pytest.fixture(scope="module")
def kb(tmp_path_factory, local_embedder):
    root = tmp_path_factory.mktemp("shape")
    (root / "docs").mkdir()
    (root / "docs" / "keys.md").write_text(KEYS, encoding="utf-8")
    (root / "docs" / "env.md").write_text(ENV, encoding="utf-8")
    with KnowledgeBase(Settings(kb=str(root / "kb.db"), llm={"provider": "none"}), embedder=local_embedder) as base:
        base.add([root / "docs"])
        yield base


@pytest.mark.parametrize("question", ["How do I rotate the signing key?", "如何轮换签名密钥？"])
def test_a_procedure_question_gets_the_steps_in_order(kb, question):
    answer = kb.ask(question)
    assert answer.answerable, answer.answer
    steps = [answer.answer.find(f"{i}. ") for i in (1, 2, 3)]
    assert -1 not in steps and steps == sorted(steps), answer.answer
    assert "keygen --new" in answer.answer and "systemctl restart app" in answer.answer


def test_a_which_file_question_leads_with_the_sentence_naming_a_file(kb):
    answer = kb.ask("Which file stores the signing keys?")
    assert answer.answerable, answer.answer
    assert answer.answer.startswith("The current keys are stored in /etc/app/keys.pem")


def test_a_which_variable_question_is_answered_by_the_variable(kb):
    answer = kb.ask("Which variable sets the log directory?")
    assert answer.answerable and answer.answer.startswith("The log directory is set by APP_LOG_DIR"), answer.answer


@pytest.mark.parametrize("question, kind", [
    ("Which file holds the host keys?", "file"), ("哪个文件保存密钥？", "file"),
    ("What package provides ssh-keygen?", "package"), ("Which environment variable sets the proxy?", "variable"),
    ("What command lists the keys?", "command"), ("What do I run to list the keys?", "command"),
    ("How long are backups kept?", None),
    ("默认的配置文件名是什么？", "file"), ("tar 会生成什么文件名的备份？", "file"),
    ("文件名里带空格时，xargs 该怎么改？", None), ("有的文件名里带空格，被拆成了两个参数，怎么办？", None),
    ("When the keys are rotated, which file holds the old ones?", "file"),
    ("What header file does a C program include?", "file"), ("可能跟哪个系统文件有关？", "file"),
    ("sha256sum 用哪个参数可以一次校验整个列表？", "option"), ("Which option should I try?", "option"),
    ("Which rebase option was removed?", "option"), ("加哪个内核参数可以回到旧模式？", "option"),
    ("timedatectl 用哪个子命令设置时区？", "command"), ("Which git subcommand prunes worktrees?", "command"),
    ("What does the file say about keys?", None),
    # 命令 (to order), 设置 (to set up) and 包括 are verbs here: no command, setting or package asked
    ("tar 打包后想删掉原始文件，有这种选项吗？叫什么？", "option"), ("Is there an option to keep the old key?", "option"),
    ("哪个皇帝命令修建了这座城墙？", None), ("哪个部门设置了这个奖项？", None), ("哪些国家包括在这个联盟里？", None),
])
def test_the_type_a_question_asks_for(question, kind):
    assert asks_for(question) == kind


@pytest.mark.parametrize("sentence, kind, holds", [
    ("Keys live in /etc/ssh/ssh_host_ed25519_key.", "file", True), ("Edit sshd_config.conf first.", "file", True),
    ("Keys are rotated monthly.", "file", False),
    ("Install it with apt install openssh-client.", "package", True), ("The openssh-server package starts sshd.", "package", True),
    ("Set PermitRootLogin to no.", "variable", True), ("Export HTTPS_PROXY before the run.", "variable", True),
    ("Run `ssh-keygen -l -f key` to see it.", "command", True), ("Keys are listed daily.", "command", False),
    ("Header file libtasn1.h.", "file", True),
    # an option of a command line or a setting written with its "="; not a hyphen inside a word
    ("-c, --check\n从指定文件中校验和信息并对它们进行检查", "option", True),
    ("You should try running with --smc-check=all in this case.", "option", True),
    ("Storage= 选项(而不是 ForwardToSyslog= 选项) 不应该设为\"none\"。", "option", True),
    ("The e-mail address of the maintainer is on the web page.", "option", False),
])
def test_a_sentence_holds_a_token_of_a_type(sentence, kind, holds):
    assert holds_type(sentence, kind) is holds


@dataclass
class _Quote:
    n: int
    start: int
    end: int
    text: str
    score: float


# sha256sum(1) in Chinese, as manpages-zh has it: the description ranks first, the option asked for second.
SHA256SUM = [_Quote(1, 0, 38, "sha256sum - 计算并校验 SHA256 信息摘要", 0.30),
             _Quote(1, 40, 62, "-c, --check\n从指定文件中校验和信息并对它们进行检查", 0.25),
             _Quote(1, 64, 80, "-b, --binary\n以二进制模式读入", 0.05)]


@pytest.mark.parametrize("question", ["sha256sum 用哪个参数可以根据 SHA256SUMS 文件一次校验？",
                                      "Which sha256sum option checks the sums listed in a file?"])
def test_a_which_option_question_leads_with_the_option(question):
    shown = shape(question, SHA256SUM, SHA256SUM[:2], 0.0, lambda n: "")
    assert shown is not None and shown.sentences[0].text.startswith("-c, --check"), shown
