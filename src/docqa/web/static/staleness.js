// A stale answer on the page: a badge on the answer and on each chip whose source changed ("source changed
// on DATE"), a Recheck button (POST /runs/{id}/recheck) and what the recheck found: each claim still
// supported, changed (the old and new text as a word diff), contradicted or gone.
import { call } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";

register({
  en: {
    "stale.badge": "Source changed on {date}", "stale.chip": "source changed on {date}",
    "stale.recheck": "Recheck", "stale.checking": "Rechecking…", "stale.failed": "The recheck failed: {message}",
    "stale.result": "Recheck ({date}): {verdict}",
    "verdict.supported": "still supported", "verdict.changed": "changed", "verdict.contradicted": "contradicted",
    "verdict.gone": "gone",
  },
  zh: {
    "stale.badge": "来源已于 {date} 更改", "stale.chip": "来源已于 {date} 更改",
    "stale.recheck": "重新核查", "stale.checking": "正在重新核查…", "stale.failed": "重新核查失败：{message}",
    "stale.result": "重新核查（{date}）：{verdict}",
    "verdict.supported": "仍然成立", "verdict.changed": "已更改", "verdict.contradicted": "相矛盾",
    "verdict.gone": "已删除",
  },
});

const day = (iso) => String(iso || "").slice(0, 10);

// The badges and the Recheck button of a past run (GET /runs/{id}) that went stale; its last recheck shown.
export function showStale(turn, record) {
  if (!record.stale) return;
  const changed = new Map();
  for (const s of record.sources || []) {
    if (s.changed_at && !changed.has(s.n)) changed.set(s.n, s.changed_at);
  }
  for (const chip of turn.answer.querySelectorAll(".chip")) {
    const when = changed.get(Number(chip.dataset.n));
    if (!when) continue;
    chip.classList.add("stale");
    chip.after(el("span", { class: "chip-stale" }, t("stale.chip", { date: day(when) })));
  }
  const panel = el("div", { class: "recheck", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "recheck-button" }, t("stale.recheck"));
  button.addEventListener("click", () => recheck(record.id, button, panel));
  turn.answer.before(el("p", { class: "stale-badge", role: "status" },
    el("span", {}, t("stale.badge", { date: day(record.stale_at) })), " ", button));
  turn.answer.after(panel);
  if (record.recheck) showRecheck(panel, record.recheck);
}

async function recheck(runId, button, panel) {
  button.disabled = true;
  panel.replaceChildren(el("p", { class: "muted" }, t("stale.checking")));
  try {
    const response = await call(`/runs/${encodeURIComponent(runId)}/recheck`, { method: "POST" });
    showRecheck(panel, await response.json());
  } catch (error) {
    panel.replaceChildren(el("p", { class: "error" }, t("stale.failed", { message: error.message })));
  } finally {
    button.disabled = false;
  }
}

// What a recheck found: the answer's verdict, then each claim's with its sources (where now, or the diff).
export function showRecheck(panel, result) {
  panel.dataset.verdict = result.verdict;
  panel.replaceChildren(
    el("p", { class: "recheck-verdict" }, t("stale.result", { date: day(result.checked_at), verdict: t(`verdict.${result.verdict}`) })),
    el("ul", { class: "recheck-claims" }, (result.claims || []).map(claimItem)));
}

function claimItem(claim) {
  return el("li", { class: `recheck-claim verdict-${claim.verdict}`, "data-verdict": claim.verdict },
    el("span", { class: "verdict" }, t(`verdict.${claim.verdict}`)), " ", el("span", { class: "claim" }, claim.text),
    (claim.sources || []).map((s) => el("div", { class: "recheck-source" },
      el("span", { class: "muted" }, `[${s.n}] ${(s.path || "").split("/").pop()}` +
        (s.location ? ` L${s.location.line_start}` : "") + (s.why ? ` — ${s.why}` : "")),
      s.diff ? el("p", { class: "diff" }, s.diff.map(piece)) : null)));
}

function piece(run) {
  if (run.op === "delete") return el("del", {}, run.text);
  if (run.op === "insert") return el("ins", {}, run.text);
  return run.text;
}
