"""The page shows which skill a run used: the live `skill` status event and a past run's trace
entries, as step lines (Debian's chromium under Playwright, the real app on loopback)."""

from __future__ import annotations

import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])")


def test_skill_steps_live_and_from_the_trace(page, web_app):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        labels = page.evaluate("""async () => {
            const { Steps } = await import("/static/steps.js");
            const live = new Steps();
            live.add({phase: "skill", name: "compare-versions", reason: "the question contains its trigger 'what changed'"});
            const past = Steps.fromTrace([
                {stage: "routing", route: "agent"},
                {stage: "skill", name: "write-procedure", reason: "the agent called use_skill", origin: "builtin"},
                {stage: "skill_resource", name: "write-procedure", path: "templates/procedure.md"}]);
            const text = (s) => [...s.node.querySelectorAll(".step-label")].map((l) => l.textContent);
            return [...text(live), ...text(past)];
        }""")
    assert labels == ["Skill compare-versions: the question contains its trigger 'what changed'",
                      "Routing the question", "Skill write-procedure: the agent called use_skill",
                      "Skill resource write-procedure/templates/procedure.md"]
