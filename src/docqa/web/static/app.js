// The page for the people who ask: ask, watch the steps, read the answer with its citations, open a source.
import { ApiError, getJSON, stream } from "./api.js";
import { el } from "./dom.js";
import { Steps } from "./steps.js";
import { closeSource, openSource } from "./viewer.js";
import { translate } from "./i18n.js";
import { startViews } from "./views.js";
import "./documents.js";
import "./log.js";
import "./status.js";

const $ = (id) => document.getElementById(id);
const state = { sessionId: null, running: null, documents: null };

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// Answer text with citation chips: "[1]" becomes a button that opens the cited source.
function renderAnswer(node, text, turn) {
  const parts = text.split(/(\[\d+\])/);
  node.replaceChildren(...parts.filter((p) => p !== "").map((part) => {
    const m = /^\[(\d+)\]$/.exec(part);
    if (!m) return document.createTextNode(part);
    const n = Number(m[1]);
    return el("button", { type: "button", class: "chip", "data-n": n, "aria-label": `Source ${n}`,
      onclick: () => openCitation(turn, n) }, `[${n}]`);
  }));
}

function openCitation(turn, n) {
  const citation = (turn.citations || []).find((c) => c.n === n);
  if (citation) openSource(citation);
  else showError(`Source [${n}] is not known yet.`);
}

async function documentIdOf(path) {
  if (!state.documents) {
    state.documents = getJSON("/documents?limit=1000").then((body) => body.documents);
    state.documents.catch(() => { state.documents = null; });
  }
  const found = (await state.documents).find((d) => d.path === path);
  return found && found.document_id;
}

// Not found: what was searched and the closest passages, each openable.
async function showNotFound(turn, runId) {
  let record;
  try {
    record = await getJSON(`/runs/${encodeURIComponent(runId)}`);
  } catch (_) {
    return;
  }
  const result = record.result || {};
  if (result.answerable !== false) return;
  const retrieval = result.retrieval || {};
  const hits = retrieval.hits || [];
  const hitButton = (hit) => el("button", {
    type: "button", class: "hit",
    onclick: async () => {
      const id = await documentIdOf(hit.path);
      if (id) openSource({ ...hit, document_id: id });
      else showError("That document is no longer listed.");
    },
  }, (hit.path || "").split("/").pop() + (hit.section ? ` § ${hit.section}` : "") +
    (hit.line_start ? ` L${hit.line_start}–${hit.line_end}` : ""));
  const panel = el("div", { class: "not-found" },
    el("p", {}, "Searched for: ", el("q", { class: "query" }, retrieval.query || record.question)),
    hits.length ? el("p", {}, "Closest passages:") : el("p", { class: "muted" }, "No passage came close."),
    el("ul", { class: "hits" }, hits.map((hit) => el("li", {}, hitButton(hit)))));
  turn.node.querySelector(".answer").after(panel);
}

function newTurn(question) {
  const steps = new Steps();
  const answer = el("div", { class: "answer" });
  const node = el("article", { class: "turn running" },
    el("p", { class: "question" }, question), steps.node, steps.current, answer,
    el("p", { class: "outcome", hidden: true }));
  $("thread").append(node);
  node.scrollIntoView({ block: "end" });
  return { node, steps, answer, text: "", citations: [], runId: null };
}

function finishTurn(turn, status, error) {
  turn.steps.finish();
  turn.answer.after(turn.steps.node); // the answer stays on top, the steps fold away below it
  turn.node.classList.remove("running");
  const outcome = turn.node.querySelector(".outcome");
  if (error || (status && status !== "SUCCESS")) {
    outcome.hidden = false;
    outcome.textContent = [status && status !== "SUCCESS" ? status : null, error].filter(Boolean).join(": ");
  }
}

async function ask(question) {
  showError("");
  let turn = newTurn(question);
  const controller = new AbortController();
  state.running = controller;
  setRunning(true);
  const body = { question, mode: $("mode").value };
  if ($("collection").value) body.collection = $("collection").value;
  if (state.sessionId) body.session_id = state.sessionId;
  let failure = null, finished = false;
  try {
    await stream("/ask", body, (type, data) => {
      if (type === "metadata") {
        if (finished) { turn = newTurn("(follow-up)"); finished = false; }
        state.sessionId = data.session_id;
        turn.runId = data.run_id;
        turn.node.dataset.runId = data.run_id;
        turn.node.dataset.sessionId = data.session_id;
      } else if (type === "status") {
        turn.steps.add(data);
      } else if (type === "content") {
        turn.text += data.delta || "";
        renderAnswer(turn.answer, turn.text, turn);
      } else if (type === "citations") {
        turn.citations = data.citations || [];
        renderAnswer(turn.answer, turn.text, turn);
      } else if (type === "failure") {
        failure = data.message || data.code;
      } else if (type === "done") {
        finishTurn(turn, data.status, failure);
        if (data.run_id) showNotFound(turn, data.run_id);
        finished = true;
        failure = null;
      }
    }, controller.signal);
    if (!finished) finishTurn(turn, "CANCELLED", failure || "the answer was stopped");
  } catch (error) {
    const stopped = error.name === "AbortError";
    finishTurn(turn, stopped ? "CANCELLED" : "FAILED", stopped ? "stopped" : error.message);
    if (!stopped) showError(error instanceof ApiError ? `${error.message} (${error.code})` : String(error));
  } finally {
    state.running = null;
    setRunning(false);
  }
}

function setRunning(running) {
  $("ask").disabled = running;
  $("stop").hidden = !running;
}

function stop() {
  if (state.running) state.running.abort(); // the server cancels the run when its stream closes
}

function newConversation() {
  stop();
  state.sessionId = null;
  $("thread").replaceChildren();
  closeSource();
  showError("");
  $("question").focus();
}

async function loadCollections() {
  try {
    const { collections } = await getJSON("/collections");
    const select = $("collection");
    select.replaceChildren(el("option", { value: "" }, "All collections"),
      ...collections.map((c) => el("option", { value: c.name }, `${c.name} (${c.documents})`)));
  } catch (error) {
    showError(`Cannot list the collections: ${error.message}`);
  }
}

function submit() {
  const input = $("question");
  const question = input.value.trim();
  if (!question || state.running) return;
  input.value = "";
  ask(question);
}

document.addEventListener("DOMContentLoaded", () => {
  $("ask-form").addEventListener("submit", (e) => { e.preventDefault(); submit(); });
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
  });
  $("stop").addEventListener("click", stop);
  $("new-conversation").addEventListener("click", newConversation);
  $("collection").addEventListener("change", () => { if (state.sessionId) newConversation(); }); // a conversation is over one collection
  $("viewer-close").addEventListener("click", closeSource);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") stop(); });
  translate();
  $("question").focus();
  loadCollections();
  startViews();
});
