// One turn of a conversation on the page: the question, its steps, the model's draft while it is written
// (grey, under the steps: never the answer), the answer with citation chips, what a not-found answer
// searched, its outcome, and thumbs up / down.  Live turns are fed by app.js from the
// event stream; past ones are rebuilt from their run records (pastTurn).
import { call, getJSON } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { showStale } from "./staleness.js";
import { Steps } from "./steps.js";
import { openSource } from "./viewer.js";

register({
  en: {
    "turn.source": "Source {n}", "turn.unknown_source": "Source [{n}] is not known yet.",
    "turn.gone": "That document is no longer listed.", "turn.queued": "Asked after the answer above.",
    "turn.not_asked": "Not asked: the run was stopped.", "turn.stopped": "stopped",
    "turn.was_stopped": "the answer was stopped",
    "notfound.searched": "Searched for: ", "notfound.closest": "Closest passages:", "notfound.none": "No passage came close.",
    "outcome.CANCELLED": "CANCELLED", "outcome.FAILED": "FAILED", "outcome.FALLBACK": "FALLBACK", "outcome.RUNNING": "RUNNING",
    "fb.label": "Rate this answer", "fb.up": "Helpful", "fb.down": "Not helpful", "fb.comment": "Why? (optional)",
    "fb.send": "Send", "fb.rated_up": "Rated helpful", "fb.rated_down": "Rated not helpful",
    "fb.failed": "The rating was not saved: {message}",
    "draft.writing": "Draft {n}, not checked yet", "draft.rejected": "Draft {n} was rejected by the fact-check",
  },
  zh: {
    "turn.source": "来源 {n}", "turn.unknown_source": "还不知道来源 [{n}]。",
    "turn.gone": "该文档已不在列表中。", "turn.queued": "将在上面的回答之后提问。",
    "turn.not_asked": "未提问：运行已停止。", "turn.stopped": "已停止",
    "turn.was_stopped": "回答已停止",
    "notfound.searched": "搜索了：", "notfound.closest": "最接近的段落：", "notfound.none": "没有相近的段落。",
    "outcome.CANCELLED": "已取消", "outcome.FAILED": "失败", "outcome.FALLBACK": "降级回答", "outcome.RUNNING": "进行中",
    "fb.label": "评价这个回答", "fb.up": "有帮助", "fb.down": "没有帮助", "fb.comment": "原因？（可选）",
    "fb.send": "发送", "fb.rated_up": "已评价：有帮助", "fb.rated_down": "已评价：没有帮助",
    "fb.failed": "评价未保存：{message}",
    "draft.writing": "草稿 {n}，尚未核查", "draft.rejected": "草稿 {n} 未通过事实核查",
  },
});

const $ = (id) => document.getElementById(id);
let documents = null; // the document list, fetched once, to open the closest passages of a not-found answer

// An element whose text is a word of the page: translated again when the language changes.
export function word(tag, key, attrs = {}, vars = undefined) {
  return el(tag, vars ? attrs : { ...attrs, "data-i18n": key }, t(key, vars));
}

export function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

export async function postJSON(path, body = {}) {
  const response = await call(path, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  return response.json();
}

export function newTurn(question, { queued = false, steps = new Steps() } = {}) {
  const answer = el("div", { class: "answer" });
  const draft = el("div", { class: "draft", hidden: true, "aria-live": "off" },
    el("p", { class: "draft-label" }), el("div", { class: "draft-text" }));
  const node = el("article", { class: queued ? "turn queued" : "turn running" },
    el("p", { class: "question" }, question), steps.node, steps.current, draft, answer,
    queued ? word("p", "turn.queued", { class: "queued-note muted" }) : null,
    el("p", { class: "outcome", hidden: true }));
  $("thread").append(node);
  node.scrollIntoView({ block: "end" });
  return { node, steps, draft, answer, question, text: "", citations: [], runId: null, draftN: null };
}

// The model's draft as it is written: grey, labelled as not checked, apart from the answer.
export function showDraft(turn, data) {
  const text = turn.draft.querySelector(".draft-text");
  if (data.n !== turn.draftN) { // a new draft replaces the one before
    turn.draftN = data.n;
    text.textContent = "";
    turn.draft.classList.remove("rejected");
    turn.draft.querySelector(".draft-label").textContent = t("draft.writing", { n: data.n });
  }
  text.textContent += data.delta || "";
  turn.draft.hidden = false;
}

// The checks rejected the draft: it stays only as a rejected draft (struck through) until the next one.
export function rejectDraft(turn, data) {
  turn.steps.add({ phase: "draft_rejected", n: data.n, problems: data.reasons || [] });
  if (data.n !== turn.draftN) return;
  turn.draft.classList.add("rejected");
  turn.draft.querySelector(".draft-label").textContent = t("draft.rejected", { n: data.n });
}

// The answer is published (or the run ended): the draft goes.
export function dropDraft(turn) {
  turn.draft.hidden = true;
  turn.draft.querySelector(".draft-text").textContent = "";
  turn.draftN = null;
}

// A queued turn becomes the one being answered.
export function startTurn(turn) {
  turn.node.classList.replace("queued", "running");
  const note = turn.node.querySelector(".queued-note");
  if (note) note.remove();
}

// Answer text with citation chips: "[1]" becomes a button that opens the cited source.
export function renderAnswer(turn) {
  const parts = turn.text.split(/(\[\d+\])/);
  turn.answer.replaceChildren(...parts.filter((p) => p !== "").map((part) => {
    const m = /^\[(\d+)\]$/.exec(part);
    if (!m) return document.createTextNode(part);
    const n = Number(m[1]);
    return el("button", { type: "button", class: "chip", "data-n": n, "aria-label": t("turn.source", { n }),
      onclick: () => openCitation(turn, n) }, `[${n}]`);
  }));
}

function openCitation(turn, n) {
  const citation = (turn.citations || []).find((c) => c.n === n);
  if (citation) openSource(citation);
  else showError(t("turn.unknown_source", { n }));
}

// Done: the answer stays on top, the steps fold away below it; the outcome when it is not a plain success.
export function finishTurn(turn, status, error, errorKey = null) {
  dropDraft(turn);
  turn.steps.finish();
  turn.answer.after(turn.steps.node);
  turn.node.classList.remove("running", "queued");
  const outcome = turn.node.querySelector(".outcome");
  const parts = [];
  if (status && status !== "SUCCESS") parts.push(word("span", `outcome.${status}`));
  if (errorKey) parts.push(word("span", errorKey));
  else if (error) parts.push(el("span", {}, error));
  if (parts.length) {
    outcome.replaceChildren(...parts.flatMap((p, i) => (i ? [": ", p] : [p])));
    outcome.hidden = false;
  }
  if (turn.runId && status && status !== "CANCELLED" && status !== "RUNNING") {
    turn.node.append(feedbackBar(turn));
  }
}

// A turn that was queued and will not be asked (the run was stopped).
export function dropTurn(turn) {
  turn.node.classList.remove("queued", "running");
  turn.node.classList.add("dropped");
  const note = turn.node.querySelector(".queued-note");
  if (note) note.replaceWith(word("p", "turn.not_asked", { class: "queued-note muted" }));
}

async function documentIdOf(path) {
  if (!documents) {
    documents = getJSON("/documents?limit=1000").then((body) => body.documents);
    documents.catch(() => { documents = null; });
  }
  const found = (await documents).find((d) => d.path === path);
  return found && found.document_id;
}

// Not found: what was searched and the closest passages, each openable.
export function showNotFound(turn, record) {
  const result = record.result || {};
  if (result.answerable !== false) return;
  const retrieval = result.retrieval || {};
  const hits = retrieval.hits || [];
  const hitButton = (hit) => el("button", {
    type: "button", class: "hit",
    onclick: async () => {
      const id = await documentIdOf(hit.path);
      if (id) openSource({ ...hit, document_id: id });
      else showError(t("turn.gone"));
    },
  }, (hit.path || "").split("/").pop() + (hit.section ? ` § ${hit.section}` : "") +
    (hit.line_start ? ` L${hit.line_start}–${hit.line_end}` : ""));
  const panel = el("div", { class: "not-found" },
    el("p", {}, word("span", "notfound.searched"), el("q", { class: "query" }, retrieval.query || record.question)),
    hits.length ? word("p", "notfound.closest") : word("p", "notfound.none", { class: "muted" }),
    el("ul", { class: "hits" }, hits.map((hit) => el("li", {}, hitButton(hit)))));
  turn.answer.after(panel);
}

export async function notFoundOf(turn, runId) {
  try {
    showNotFound(turn, await getJSON(`/runs/${encodeURIComponent(runId)}`));
  } catch (_) { /* the answer stands without the panel */ }
}

// A past run (GET /runs/{id}) as a finished turn: its answer, chips, folded steps and the rating given.
export function pastTurn(record) {
  const result = record.result || {};
  const turn = newTurn(record.question, { steps: Steps.fromTrace(record.trace) });
  turn.runId = record.id;
  turn.node.dataset.runId = record.id;
  turn.node.dataset.sessionId = record.session_id;
  turn.text = record.answer ?? result.answer ?? "";
  turn.citations = result.citations || [];
  turn.given = (record.feedback || []).at(-1) || null;
  renderAnswer(turn);
  finishTurn(turn, record.status, record.error);
  showNotFound(turn, record);
  showStale(turn, record);
  return turn;
}

function thumb(rating) {
  const svg = document.getElementById("thumb-icon").content.firstElementChild.cloneNode(true); // index.html
  svg.classList.add(`thumb-${rating}`);
  const key = rating === "up" ? "fb.up" : "fb.down";
  return el("button", { type: "button", class: `fb-${rating}`, "aria-pressed": "false", "aria-label": t(key),
    "data-i18n-aria-label": key, title: t(key), "data-i18n-title": key }, svg);
}

// Thumbs up / down, then an optional comment and Send; once given, the rating shows as given.
function feedbackBar(turn) {
  const up = thumb("up"), down = thumb("down");
  const comment = el("input", { type: "text", class: "fb-comment", maxlength: 5000, hidden: true,
    placeholder: t("fb.comment"), "data-i18n-placeholder": "fb.comment", "aria-label": t("fb.comment"),
    "data-i18n-aria-label": "fb.comment" });
  const send = word("button", "fb.send", { type: "button", class: "fb-send", hidden: true });
  const given = el("span", { class: "fb-given", "aria-live": "polite" });
  const bar = el("div", { class: "feedback", role: "group", "aria-label": t("fb.label"), "data-i18n-aria-label": "fb.label" },
    up, down, comment, send, given);
  let rating = null;
  const choose = (r) => {
    rating = r;
    up.setAttribute("aria-pressed", String(r === "up"));
    down.setAttribute("aria-pressed", String(r === "down"));
    comment.hidden = send.hidden = false;
    comment.focus();
  };
  const submit = async () => {
    send.disabled = true;
    try {
      showGiven(bar, await postJSON(`/runs/${encodeURIComponent(turn.runId)}/feedback`,
        { rating, comment: comment.value.trim() || null }));
    } catch (error) {
      send.disabled = false;
      given.replaceChildren(t("fb.failed", { message: error.message }));
    }
  };
  up.addEventListener("click", () => choose("up"));
  down.addEventListener("click", () => choose("down"));
  send.addEventListener("click", submit);
  comment.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); submit(); }
  });
  if (turn.given) showGiven(bar, turn.given);
  return bar;
}

function showGiven(bar, feedback) {
  bar.classList.add("given");
  bar.dataset.rating = feedback.rating;
  for (const r of ["up", "down"]) {
    const button = bar.querySelector(`.fb-${r}`);
    button.setAttribute("aria-pressed", String(r === feedback.rating));
    button.disabled = true;
  }
  bar.querySelector(".fb-comment").hidden = bar.querySelector(".fb-send").hidden = true;
  const key = feedback.rating === "up" ? "fb.rated_up" : "fb.rated_down";
  bar.querySelector(".fb-given").replaceChildren(word("span", key),
    feedback.comment ? el("q", { class: "fb-said" }, feedback.comment) : "");
}

document.addEventListener("docqa:language", () => {
  for (const chip of document.querySelectorAll("#thread .chip")) {
    chip.setAttribute("aria-label", t("turn.source", { n: chip.dataset.n }));
  }
});
