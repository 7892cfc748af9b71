// The page for the people who ask: ask, watch the steps, read the answer with its citations, open a source;
// steer or stop the agent while it works, queue follow-ups, rate answers, reopen past conversations.
import { ApiError, call, getJSON, stream } from "./api.js";
import { el } from "./dom.js";
import { language, register, setLanguage, t, translate } from "./i18n.js";
import { loadSessions, markActive, openSession, startSessions } from "./sessions.js";
import { closeSource } from "./viewer.js";
import { dropDraft, dropTurn, finishTurn, newTurn, notFoundOf, postJSON, rejectDraft, renderAnswer, showDraft, showError,
  startTurn } from "./turn.js";
import { startViews } from "./views.js";
import "./documents.js";
import "./log.js";
import "./status.js";

register({
  en: {
    "nav.ask": "Ask", "nav.documents": "Documents", "nav.log": "Log", "nav.status": "Status", "nav.views": "Views",
    "ask.collection": "Collection", "ask.all_collections": "All collections", "ask.mode": "Mode",
    "ask.mode_auto": "auto", "ask.mode_pipeline": "pipeline", "ask.mode_agent": "agent",
    "ask.new": "New conversation", "ask.language": "Language", "ask.question": "Question",
    "ask.placeholder": "Ask a question about your documents (Enter asks, Shift+Enter: new line)",
    "ask.placeholder_phone": "Ask about your documents", "menu.label": "Menu", "ask.new_short": "New",
    "ask.placeholder_running": "A follow-up? It is asked after the answer (Esc stops)",
    "ask.ask": "Ask", "ask.stop": "Stop", "ask.stop_label": "Stop the answer (Esc)", "ask.conversation": "Conversation",
    "ask.followup": "(follow-up)", "ask.collections_failed": "Cannot list the collections: {message}",
    "steer.label": "Steer the agent", "steer.placeholder": "e.g. look only at the 2023 version", "steer.send": "Steer",
    "steer.sent": "Sent: it joins after the current tool round.", "steer.refused": "Not sent: {message}",
  },
  zh: {
    "nav.ask": "提问", "nav.documents": "文档", "nav.log": "问答记录", "nav.status": "状态", "nav.views": "视图",
    "ask.collection": "文档集", "ask.all_collections": "全部文档集", "ask.mode": "模式",
    "ask.mode_auto": "自动", "ask.mode_pipeline": "流水线", "ask.mode_agent": "智能体",
    "ask.new": "新对话", "ask.language": "语言", "ask.question": "问题",
    "ask.placeholder": "就你的文档提问（Enter 提问，Shift+Enter 换行）",
    "ask.placeholder_phone": "就你的文档提问", "menu.label": "菜单", "ask.new_short": "新对话",
    "ask.placeholder_running": "要追问吗？将在回答之后提问（Esc 停止）",
    "ask.ask": "提问", "ask.stop": "停止", "ask.stop_label": "停止回答（Esc）", "ask.conversation": "对话",
    "ask.followup": "（追问）", "ask.collections_failed": "无法列出文档集：{message}",
    "steer.label": "引导智能体", "steer.placeholder": "例如：只看 2023 年的版本", "steer.send": "引导",
    "steer.sent": "已发送：将在当前工具调用之后加入。", "steer.refused": "未发送：{message}",
  },
});

const $ = (id) => document.getElementById(id);
// running: the answer being streamed {controller, turn, stopped}.  waiting: turns whose follow-up the
// server took (answered in the same stream, in order); later: turns to ask when the stream has ended.
const state = { sessionId: null, running: null, waiting: [], later: [] };

function onEvent(run, type, data) {
  let turn = run.turn;
  if (type === "metadata") {
    if (run.finished) { // the server goes on with a follow-up it took
      turn = run.turn = state.waiting.shift() || newTurn(t("ask.followup"));
      startTurn(turn);
      run.finished = false;
    }
    state.sessionId = data.session_id;
    turn.runId = data.run_id;
    turn.node.dataset.runId = data.run_id;
    turn.node.dataset.sessionId = data.session_id;
    markActive(data.session_id);
  } else if (type === "status") {
    turn.steps.add(data);
    if (data.phase === "steered") $("steer-note").textContent = "";
  } else if (type === "draft") { // the model's text before the checks: shown as a draft, never as the answer
    showDraft(turn, data);
  } else if (type === "draft_rejected") {
    rejectDraft(turn, data);
  } else if (type === "content") { // the published answer
    dropDraft(turn);
    turn.text = (data.replace ? "" : turn.text) + (data.delta || "");
    renderAnswer(turn);
  } else if (type === "citations") {
    turn.citations = data.citations || [];
    renderAnswer(turn);
  } else if (type === "failure") {
    run.failure = data.message || data.code;
  } else if (type === "done") {
    finishTurn(turn, data.status, run.failure);
    if (data.run_id) notFoundOf(turn, data.run_id);
    run.finished = true;
    run.failure = null;
    loadSessions(state.sessionId);
  }
}

async function ask(question, turn = newTurn(question)) {
  showError("");
  startTurn(turn);
  const run = { controller: new AbortController(), turn, stopped: false, finished: false, failure: null };
  state.running = run;
  setRunning(true);
  const body = { question, mode: $("mode").value };
  if ($("collection").value) body.collection = $("collection").value;
  if (state.sessionId) body.session_id = state.sessionId;
  try {
    await stream("/ask", body, (type, data) => onEvent(run, type, data), run.controller.signal);
    if (!run.finished) finishTurn(run.turn, "CANCELLED", run.failure, run.failure ? null : "turn.was_stopped");
  } catch (error) {
    const stopped = error.name === "AbortError";
    if (!run.finished) finishTurn(run.turn, stopped ? "CANCELLED" : "FAILED", stopped ? null : error.message,
      stopped ? "turn.stopped" : null);
    if (!stopped) showError(error instanceof ApiError ? `${error.message} (${error.code})` : String(error));
  } finally {
    state.running = null;
    setRunning(false);
    state.later.unshift(...state.waiting.splice(0)); // taken by the server but not reached: asked now
    if (run.stopped) state.later.splice(0).forEach(dropTurn);
    loadSessions(state.sessionId);
    askNext();
  }
}

function askNext() {
  if (state.running || !state.later.length) return;
  const turn = state.later.shift();
  ask(turn.question, turn);
}

// A question typed while the answer is written: the server answers it next in the same stream when it
// takes it; else (no run id yet, or the run just ended) it is asked when the stream ends.
async function followUp(question) {
  const turn = newTurn(question, { queued: true });
  const runId = state.running && state.running.turn.runId;
  if (!runId) {
    state.later.push(turn);
    return askNext();
  }
  state.waiting.push(turn); // before the request: its metadata may arrive before the 202
  try {
    await postJSON(`/runs/${encodeURIComponent(runId)}/follow-up`, { text: question });
  } catch (_) {
    const at = state.waiting.indexOf(turn);
    if (at >= 0) {
      state.waiting.splice(at, 1);
      state.later.push(turn);
    }
    askNext();
  }
}

async function steer(text) {
  const run = state.running;
  if (!run || !run.turn.runId) return;
  try {
    await postJSON(`/runs/${encodeURIComponent(run.turn.runId)}/steer`, { text });
    $("steer-note").textContent = t("steer.sent");
  } catch (error) {
    $("steer-note").textContent = t("steer.refused", { message: error.message });
  }
}

// A phone has no Shift+Enter: its placeholder is short enough to show whole.
const PHONE = window.matchMedia("(max-width: 760px)");

function setRunning(running) {
  const box = $("question");
  box.dataset.i18nPlaceholder = running ? "ask.placeholder_running" : PHONE.matches ? "ask.placeholder_phone" : "ask.placeholder";
  box.placeholder = t(box.dataset.i18nPlaceholder);
  $("stop").hidden = !running;
  $("steer-form").hidden = !running;
  $("steer-note").textContent = "";
  if (!running && document.activeElement === $("steer-input")) $("question").focus();
}

// Stop: the server is told to cancel (no further model call) and the stream is closed; queued questions
// are not asked.
function stop() {
  const run = state.running;
  if (!run) return;
  run.stopped = true;
  if (run.turn.runId) call(`/runs/${encodeURIComponent(run.turn.runId)}/cancel`, { method: "POST" }).catch(() => {});
  run.controller.abort();
}

function clearThread() {
  stop();
  state.later.splice(0);
  state.waiting.splice(0);
  $("thread").replaceChildren();
  closeSource();
  showError("");
}

function newConversation() {
  clearThread();
  state.sessionId = null;
  markActive(null);
  $("question").focus();
}

async function openConversation(id) {
  clearThread();
  try {
    const session = await openSession(id);
    state.sessionId = id;
    const asked = session.runs.length ? session.runs[session.runs.length - 1].collection : null;
    if ([...$("collection").options].some((o) => o.value === (asked || ""))) $("collection").value = asked || "";
    $("question").focus();
  } catch (error) {
    showError(error.message);
  }
}

async function loadCollections() {
  try {
    const { collections } = await getJSON("/collections");
    const select = $("collection");
    const kept = select.value;
    select.replaceChildren(el("option", { value: "", "data-i18n": "ask.all_collections" }, t("ask.all_collections")),
      ...collections.map((c) => el("option", { value: c.name }, `${c.name} (${c.documents})`)));
    select.value = kept;
  } catch (error) {
    showError(t("ask.collections_failed", { message: error.message }));
  }
}

function submit() {
  const input = $("question");
  const question = input.value.trim();
  if (!question) return;
  input.value = "";
  if (state.running) followUp(question);
  else ask(question);
}

// The header's menu on a phone: the toggle opens and closes it; picking a view, Escape or a click elsewhere closes it.
function setMenu(open) {
  document.body.classList.toggle("menu-open", open);
  $("menu-toggle").setAttribute("aria-expanded", String(open));
}

function startMenu() {
  $("menu-toggle").addEventListener("click", (e) => {
    e.stopPropagation();
    setMenu(!document.body.classList.contains("menu-open"));
  });
  $("nav").addEventListener("click", (e) => { if (e.target.closest("[data-view]")) setMenu(false); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") setMenu(false); });
  document.addEventListener("click", (e) => { if (!e.target.closest("#header-menu")) setMenu(false); });
  PHONE.addEventListener("change", () => { setMenu(false); if (!state.running) setRunning(false); });
}

function startLanguage() {
  const select = $("language");
  select.value = language();
  select.addEventListener("change", () => setLanguage(select.value));
  translate();
}

document.addEventListener("DOMContentLoaded", () => {
  $("ask-form").addEventListener("submit", (e) => { e.preventDefault(); submit(); });
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
  });
  $("steer-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("steer-input").value.trim();
    $("steer-input").value = "";
    if (text) steer(text);
  });
  $("stop").addEventListener("click", stop);
  $("new-conversation").addEventListener("click", newConversation);
  $("collection").addEventListener("change", () => { // a conversation is over one collection
    if (state.sessionId) newConversation();
    document.dispatchEvent(new CustomEvent("docqa:collection", { detail: { collection: $("collection").value } }));
  });
  document.addEventListener("docqa:ask", (e) => { // an example question picked in the empty view
    $("question").value = e.detail.question;
    submit();
  });
  document.addEventListener("docqa:documents-added", loadCollections);
  startMenu();
  $("viewer-close").addEventListener("click", closeSource);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") stop(); });
  startLanguage();
  setRunning(false); // the placeholder that fits the screen
  $("question").focus();
  loadCollections();
  startViews();
  startSessions(openConversation);
});
