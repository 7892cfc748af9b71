// Past conversations: the caller's sessions (GET /sessions, newest first) in a sidebar — a drawer behind
// a toggle on a phone — and a past one reopened turn by turn from its run records.  Those started
// elsewhere (the command line, an MCP client) are in a collapsed group each; titles that would read the
// same get the collection, else the time, after them.
import { getJSON } from "./api.js";
import { el } from "./dom.js";
import { language, register, t } from "./i18n.js";
import { pastTurn } from "./turn.js";

register({
  en: {
    "sessions.title": "Conversations", "sessions.toggle": "Conversations", "sessions.empty": "No conversations yet.",
    "sessions.runs_one": "1 question", "sessions.runs": "{n} questions", "sessions.failed": "Cannot list the conversations: {message}",
    "sessions.from.cli": "From the command line ({n})", "sessions.from.mcp": "From MCP clients ({n})",
    "sessions.from.openai": "From chat apps ({n})",
  },
  zh: {
    "sessions.title": "对话", "sessions.toggle": "对话", "sessions.empty": "还没有对话。",
    "sessions.runs_one": "1 个问题", "sessions.runs": "{n} 个问题", "sessions.failed": "无法列出对话：{message}",
    "sessions.from.cli": "来自命令行（{n}）", "sessions.from.mcp": "来自 MCP 客户端（{n}）",
    "sessions.from.openai": "来自聊天应用（{n}）",
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

const ELSEWHERE = ["cli", "mcp", "openai"]; // origins grouped apart: not asked on a page like this one
const opened = new Set(); // groups the reader opened (kept open when the list is drawn again)

// Each session's title: its first question and, where several read the same, what tells it apart — the
// collection, else its number among those alike (the oldest #1; the line below has the time) — kept visible
// when a long question is cut.
function titles(sessions) {
  const base = (s) => s.first_question || s.title;
  const alike = (s) => `${base(s)}\n${s.collection || ""}`;
  const count = (key) => sessions.reduce((m, s) => m.set(key(s), (m.get(key(s)) || 0) + 1), new Map());
  const same = count(base), sameCollection = count(alike);
  const seen = new Map();
  const numbers = new Map([...sessions].sort((a, b) => (a.created_at < b.created_at ? -1 : 1)).map((s) => {
    seen.set(alike(s), (seen.get(alike(s)) || 0) + 1);
    return [s.id, seen.get(alike(s))];
  }));
  return new Map(sessions.map((s) => [s.id, { question: base(s), apart: same.get(base(s)) < 2 ? "" :
    sameCollection.get(alike(s)) < 2 ? s.collection || t("ask.all_collections") : `#${numbers.get(s.id)}` }]));
}

function item(s, title, onPick) {
  const whole = title.apart ? `${title.question} — ${title.apart}` : title.question;
  return el("li", {},
    el("button", { type: "button", class: "session", "data-session-id": s.id, "data-origin": s.origin || "",
      "aria-current": s.id === active ? "true" : "false", title: whole, onclick: () => onPick(s.id) },
    el("span", { class: "session-q" }, el("span", { class: "session-question" }, title.question),
      title.apart ? el("span", { class: "session-apart" }, `— ${title.apart}`) : null),
    el("span", { class: "session-meta" }, [s.runs === 1 ? t("sessions.runs_one") : t("sessions.runs", { n: s.runs }),
      s.collection, when(s.last_activity)].filter(Boolean).join(" · "))));
}

function group(origin, sessions, named, onPick) {
  const box = el("details", { class: "session-group", "data-origin": origin,
    open: opened.has(origin) || sessions.some((s) => s.id === active) },
  el("summary", {}, t(`sessions.from.${origin}`, { n: sessions.length })),
  el("ul", { class: "session-list" }, sessions.map((s) => item(s, named.get(s.id), onPick))));
  box.addEventListener("toggle", () => { if (box.open) opened.add(origin); else opened.delete(origin); });
  return box;
}

function render(onPick) {
  const named = titles(listed);
  const here = listed.filter((s) => !ELSEWHERE.includes(s.origin));
  $("session-list").replaceChildren(...here.map((s) => item(s, named.get(s.id), onPick)));
  $("session-groups").replaceChildren(...ELSEWHERE.map((o) => [o, listed.filter((s) => s.origin === o)])
    .filter(([, sessions]) => sessions.length).map(([o, sessions]) => group(o, sessions, named, onPick)));
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
  for (const button of document.querySelectorAll("#sessions .session")) {
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
