// The Log view (editors): the question-and-answer log with the attention filter (not found, failed, low
// confidence, rated down, escalated, stale) and plain filters; a row opens its run's full trace; the same rows export as CSV.
// A maintainer corrects a row's answer: the note becomes a document of the run's collection.
import { API, ApiError, call, getJSON } from "./api.js";
import { postJSON } from "./turn.js";
import { collectionNames, fillSelect } from "./collections.js";
import { el, oneLine } from "./dom.js";
import { register, t } from "./i18n.js";
import { renderTrace } from "./trace.js";
import { when } from "./format.js";
import { onShow } from "./views.js";

register({
  en: {
    "log.title": "Questions and answers", "log.show": "Show", "log.all": "All questions", "log.attention": "Needs attention",
    "log.not_found": "Not found", "log.failed": "Failed", "log.low_confidence": "Low confidence", "log.rated_down": "Rated down",
    "log.escalated": "Escalated", "log.stale": "Stale", "log.stale_tag": "stale since {date}", "log.search": "Search questions and answers", "log.collection": "Collection", "log.collections": "All collections",
    "log.status": "Status", "log.statuses": "any status", "log.since": "Since", "log.csv": "Export CSV",
    "log.when": "When", "log.question": "Question", "log.confidence": "Confidence", "log.feedback": "Feedback",
    "log.reason": "Why", "log.count": "{n} question(s)", "log.trace": "Trace", "log.close": "Close",
    "log.votes": "up {up} · down {down}",
    "log.correct": "Correct", "log.corrected": "corrected", "log.note": "The right answer, or the fact the documents miss",
    "log.save": "Save", "log.cancel": "Cancel", "log.saved": "Saved as {path}: later answers cite it",
  },
  zh: {
    "log.title": "问答记录", "log.show": "显示", "log.all": "全部问题", "log.attention": "需要关注", "log.not_found": "未找到",
    "log.failed": "失败", "log.low_confidence": "低置信度", "log.rated_down": "差评", "log.escalated": "已升级处理", "log.stale": "来源已更改", "log.stale_tag": "{date} 起来源已更改", "log.search": "搜索问题和回答",
    "log.collection": "集合", "log.collections": "全部集合", "log.status": "状态", "log.statuses": "全部状态",
    "log.since": "起始日期", "log.csv": "导出 CSV", "log.when": "时间", "log.question": "问题", "log.confidence": "置信度",
    "log.feedback": "反馈", "log.reason": "原因", "log.count": "{n} 个问题", "log.trace": "运行详情", "log.close": "关闭",
    "log.votes": "赞 {up} · 踩 {down}",
    "log.correct": "更正", "log.corrected": "已更正", "log.note": "正确的答案，或文档缺少的事实", "log.save": "保存",
    "log.cancel": "取消", "log.saved": "已保存为 {path}：之后的回答会引用它",
  },
});

const KINDS = ["not_found", "failed", "low_confidence", "rated_down", "escalated", "stale"];
const STATUSES = ["SUCCESS", "FALLBACK", "FAILED", "CANCELLED"];
const view = { built: null, timer: null };
const $ = (id) => document.getElementById(id);

function build(section) {
  const show = el("select", { id: "log-show", "aria-label": t("log.show") }, el("option", { value: "" }, t("log.all")),
    el("option", { value: "attention" }, t("log.attention")), KINDS.map((k) => el("option", { value: k }, t(`log.${k}`))));
  const search = el("input", { id: "log-search", type: "search", placeholder: t("log.search"), "aria-label": t("log.search") });
  const collection = el("select", { id: "log-collection", "aria-label": t("log.collection") });
  const status = el("select", { id: "log-status", "aria-label": t("log.status") }, el("option", { value: "" }, t("log.statuses")),
    STATUSES.map((s) => el("option", { value: s }, s)));
  const since = el("input", { id: "log-since", type: "date", "aria-label": t("log.since") });
  for (const control of [show, collection, status, since]) control.addEventListener("change", load);
  search.addEventListener("input", () => { clearTimeout(view.timer); view.timer = setTimeout(load, 250); });
  const csv = el("a", { id: "log-csv", class: "button", href: `${API}/log.csv`, download: "docqa-log.csv" }, t("log.csv"));
  csv.addEventListener("click", download);
  const heads = ["log.when", "log.question", "log.status", "log.confidence", "log.collection", "log.feedback", "log.reason"];
  section.replaceChildren(el("div", { class: "log-layout" },
    el("div", { class: "log-main" },
      el("h2", {}, t("log.title")),
      el("div", { class: "filters" }, show, search, collection, status, since, csv),
      el("p", { id: "log-message", class: "muted", role: "status" }),
      el("div", { class: "table-wrap" }, el("table", { id: "log-table", class: "data" },
        el("thead", {}, el("tr", {}, heads.map((h) => el("th", { scope: "col" }, t(h))))), el("tbody", { id: "log-rows" })))),
    el("aside", { id: "log-trace", class: "trace-panel", "aria-label": t("log.trace"), hidden: true },
      el("div", { class: "viewer-head" }, el("h2", {}, t("log.trace")),
        el("button", { type: "button", id: "log-trace-close", "aria-label": t("trace.close"),
          onclick: () => { $("log-trace").hidden = true; } }, "×")),
      el("div", { id: "log-trace-body" }))));
}

// The filters as query parameters, the same for the list and the CSV.
function params() {
  const p = new URLSearchParams({ limit: 1000 });
  const show = $("log-show").value;
  if (show === "attention") p.set("attention", "true");
  else if (show) p.set("kind", show);
  if ($("log-search").value.trim()) p.set("q", $("log-search").value.trim());
  if ($("log-collection").value) p.set("collection", $("log-collection").value);
  if ($("log-status").value) p.set("status", $("log-status").value);
  if ($("log-since").value) p.set("since", $("log-since").value);
  return p;
}

async function load() {
  const p = params();
  const ticket = view.ticket = (view.ticket || 0) + 1; // only the latest filters' answer is shown
  $("log-csv").href = `${API}/log.csv?${p}`;
  try {
    const body = await getJSON(`/log?${p}`);
    if (ticket !== view.ticket) return;
    $("log-rows").replaceChildren(...body.questions.map(row));
    $("log-message").textContent = t("log.count", { n: body.total });
  } catch (error) {
    $("log-message").textContent = error.message;
  }
}

function row(q) {
  return el("tr", { "data-run-id": q.run_id, "data-status": q.status, "data-attention": (q.attention || []).join(" ") },
    el("td", {}, when(q.created_at)),
    el("td", {}, el("button", { type: "button", class: "link open-trace", onclick: () => openTrace(q.run_id) },
      oneLine(q.question, 200))),
    el("td", {}, q.status), el("td", {}, q.confidence || ""), el("td", {}, q.collection || ""),
    el("td", {}, t("log.votes", { up: q.feedback_up, down: q.feedback_down })),
    el("td", { class: "reason" }, q.reason || "", " ", q.corrected ? el("span", { class: "tag corrected" }, t("log.corrected")) : "",
      q.stale ? el("span", { class: "tag stale" }, t("log.stale_tag", { date: String(q.stale_at).slice(0, 10) })) : "",
      el("button", { type: "button", class: "link correct", onclick: (e) => correctForm(e.currentTarget, q.run_id) },
        t("log.correct"))));
}

// An inline note under the reason: saved through the API (editors), indexed at once by the server.
function correctForm(button, runId) {
  const cell = button.parentElement;
  if (cell.querySelector("form")) return;
  const text = el("textarea", { rows: 3, maxlength: 4000, "aria-label": t("log.note"), placeholder: t("log.note") });
  const form = el("form", { class: "correction" }, text,
    el("button", { type: "submit" }, t("log.save")),
    el("button", { type: "button", onclick: () => form.remove() }, t("log.cancel")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!text.value.trim()) return;
    try {
      const doc = await postJSON(`/runs/${encodeURIComponent(runId)}/correction`, { text: text.value });
      form.replaceWith(el("span", { class: "tag corrected", role: "status" }, t("log.saved", { path: doc.path })));
    } catch (error) {
      $("log-message").textContent = error instanceof ApiError ? error.message : String(error);
    }
  });
  cell.append(form);
  text.focus();
}

async function openTrace(runId) {
  const panel = $("log-trace");
  try {
    const run = await getJSON(`/runs/${encodeURIComponent(runId)}`);
    $("log-trace-body").replaceChildren(renderTrace(run));
    panel.dataset.runId = runId;
    panel.hidden = false;
    $("log-trace-close").focus();
  } catch (error) {
    $("log-message").textContent = error instanceof ApiError ? error.message : String(error);
  }
}

// The CSV through the API (with the page's key), saved as a file.
async function download(event) {
  event.preventDefault();
  const name = event.currentTarget.getAttribute("download") || "docqa-log.csv"; // gone after the first await
  try {
    const response = await call(`/log.csv?${params()}`);
    const url = URL.createObjectURL(await response.blob());
    const link = el("a", { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (error) {
    $("log-message").textContent = error.message;
  }
}

async function open() {
  const lang = document.documentElement.lang || "en";
  if (view.built !== lang) {
    view.built = lang;
    build(document.getElementById("view-log"));
  }
  try {
    fillSelect($("log-collection"), await collectionNames(), t("log.collections"));
  } catch (_) { /* the list still loads */ }
  load();
}

onShow("log", open);
document.addEventListener("keydown", (e) => { // Esc closes an open trace (and returns to its row)
  const panel = document.getElementById("log-trace");
  if (e.key !== "Escape" || !panel || panel.hidden) return;
  panel.hidden = true;
  const row = document.querySelector(`#log-rows tr[data-run-id="${CSS.escape(panel.dataset.runId || "")}"] button`);
  if (row) row.focus();
});
document.addEventListener("docqa:language", () => {
  if (!document.getElementById("view-log").hidden) open();
});
