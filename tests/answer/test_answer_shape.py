"""No-model answers shaped like answers: a typed question leads with a token of its type, a procedure
question gets its steps whole and in order.  Real files, real SQLite, the bundled embedder."""

from __future__ import annotations

import pytest

from docqa.answer.shape import asks_for, holds_type
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
])
def test_the_type_a_question_asks_for(question, kind):
    assert asks_for(question) == kind


@pytest.mark.parametrize("sentence, kind, holds", [
    ("Keys live in /etc/ssh/ssh_host_ed25519_key.", "file", True), ("Edit sshd_config.conf first.", "file", True),
    ("Keys are rotated monthly.", "file", False),
    ("Install it with apt install openssh-client.", "package", True), ("The openssh-server package starts sshd.", "package", True),
    ("Set PermitRootLogin to no.", "variable", True), ("Export HTTPS_PROXY before the run.", "variable", True),
    ("Run `ssh-keygen -l -f key` to see it.", "command", True), ("Keys are listed daily.", "command", False),
])
def test_a_sentence_holds_a_token_of_a_type(sentence, kind, holds):
    assert holds_type(sentence, kind) is holds
