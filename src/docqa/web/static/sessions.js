// Past conversations: the caller's sessions (GET /sessions, newest first) in a sidebar — a drawer behind
// a toggle on a phone — and a past one reopened turn by turn from its run records.
import { getJSON } from "./api.js";
import { el } from "./dom.js";
import { language, register, t } from "./i18n.js";
import { pastTurn } from "./turn.js";

register({
  en: {
    "sessions.title": "Conversations", "sessions.toggle": "Conversations", "sessions.empty": "No conversations yet.",
    "sessions.runs_one": "1 question", "sessions.runs": "{n} questions", "sessions.failed": "Cannot list the conversations: {message}",
  },
  zh: {
    "sessions.title": "对话", "sessions.toggle": "对话", "sessions.empty": "还没有对话。",
    "sessions.runs_one": "1 个问题", "sessions.runs": "{n} 个问题", "sessions.failed": "无法列出对话：{message}",
  },
});

const $ = (id) => document.getElementById(id);
let listed = [];
let active = null;

function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString(language() === "zh" ? "zh-CN" : "en", { dateStyle: "short", timeStyle: "short" });
}

function render(onPick) {
  const list = $("session-list");
  list.replaceChildren(...listed.map((s) => el("li", {},
    el("button", { type: "button", class: "session", "data-session-id": s.id,
      "aria-current": s.id === active ? "true" : "false", onclick: () => onPick(s.id) },
    el("span", { class: "session-q" }, s.first_question || s.title),
    el("span", { class: "session-meta" }, [s.runs === 1 ? t("sessions.runs_one") : t("sessions.runs", { n: s.runs }),
      s.collection, when(s.last_activity)].filter(Boolean).join(" · "))))));
  $("sessions-empty").hidden = listed.length > 0;
}

let picker = () => {};

// The list again (after a run, or when the language changes); `current` is the open conversation.
export async function loadSessions(current = active) {
  active = current;
  try {
    listed = (await getJSON("/sessions?limit=100")).sessions;
    $("sessions").dataset.loaded = "true";
  } catch (error) {
    $("sessions-empty").hidden = false;
    $("sessions-empty").textContent = t("sessions.failed", { message: error.message });
    return;
  }
  render(picker);
}

export function markActive(current) {
  active = current;
  for (const button of document.querySelectorAll("#session-list .session")) {
    button.setAttribute("aria-current", button.dataset.sessionId === current ? "true" : "false");
  }
}

// A past conversation's turns, oldest first, in #thread; returns the session (id, collection, runs).
export async function openSession(id) {
  const session = await getJSON(`/sessions/${encodeURIComponent(id)}`);
  const records = await Promise.all(session.runs.map((r) => getJSON(`/runs/${encodeURIComponent(r.id)}`)));
  $("thread").replaceChildren();
  records.forEach(pastTurn);
  markActive(id);
  return session;
}

// The drawer on a phone: the toggle opens and closes it; picking a conversation closes it.
function setDrawer(open) {
  document.body.classList.toggle("sessions-open", open);
  $("sessions-toggle").setAttribute("aria-expanded", String(open));
}

export function startSessions(onPick) {
  picker = (id) => { setDrawer(false); onPick(id); };
  $("sessions-toggle").addEventListener("click", () => setDrawer(!document.body.classList.contains("sessions-open")));
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") setDrawer(false); });
  document.addEventListener("docqa:language", () => render(picker));
  return loadSessions();
}
