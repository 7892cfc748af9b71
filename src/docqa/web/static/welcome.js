// The empty Ask view (issue 33): what the knowledge base holds — documents, collections, the documents'
// languages — and three questions to try, drawn from the documents' own headings (GET /overview, over the
// caller's collections); with no documents, the upload area (editors) or who can add them.
import { getJSON } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { Uploader } from "./upload.js";
import { caller, can } from "./views.js";

register({
  en: {
    "welcome.title": "Ask your documents", "welcome.try": "Try asking",
    "welcome.counts": "{documents} · {chunks} · {collections}", "welcome.documents_one": "1 document",
    "welcome.documents": "{n} documents", "welcome.chunks": "{n} passages", "welcome.collections_one": "1 collection",
    "welcome.collections": "{n} collections", "welcome.languages": "Written in {languages}",
    "welcome.collection": "{name}: {n}", "welcome.source": "from {path}",
    "welcome.empty_title": "No documents yet", "welcome.empty": "Add documents to ask about: drop files or a folder here.",
    "welcome.empty_reader": "Someone who keeps the documents adds them (the Documents view, or 'docqa add FOLDER').",
    "welcome.no_examples": "Ask anything the documents may say.", "welcome.failed": "Cannot read what the knowledge base holds: {message}",
    "lang.en": "English", "lang.zh": "Chinese",
  },
  zh: {
    "welcome.title": "向你的文档提问", "welcome.try": "试着问",
    "welcome.counts": "{documents} · {chunks} · {collections}", "welcome.documents_one": "1 个文档",
    "welcome.documents": "{n} 个文档", "welcome.chunks": "{n} 个段落", "welcome.collections_one": "1 个文档集",
    "welcome.collections": "{n} 个文档集", "welcome.languages": "语言：{languages}",
    "welcome.collection": "{name}：{n}", "welcome.source": "出自 {path}",
    "welcome.empty_title": "还没有文档", "welcome.empty": "先添加要提问的文档：把文件或文件夹拖到这里。",
    "welcome.empty_reader": "由维护文档的人添加（“文档”视图，或 'docqa add 文件夹'）。",
    "welcome.no_examples": "问文档里可能写到的任何事。", "welcome.failed": "无法读取知识库的内容：{message}",
    "lang.en": "英文", "lang.zh": "中文",
  },
});

const $ = (id) => document.getElementById(id);
const state = { overview: null, collection: "", ticket: 0, uploader: null };

function number(n) {
  return Number(n).toLocaleString(document.documentElement.lang || "en");
}

function plural(key, n) {
  return n === 1 ? t(`${key}_one`) : t(key, { n: number(n) });
}

function languages(counts) {
  const total = Object.values(counts).reduce((a, b) => a + b, 0) || 1;
  return Object.entries(counts).map(([code, n]) => {
    const name = t(`lang.${code}`) === `lang.${code}` ? code : t(`lang.${code}`);
    return Object.keys(counts).length > 1 ? `${name} ${Math.round((100 * n) / total)} %` : name;
  }).join(", ");
}

function example(e) {
  return el("li", {}, el("button", { type: "button", class: "example", lang: e.language === "zh" ? "zh-CN" : "en",
    "data-collection": e.collection, onclick: () => ask(e) },
  e.question, el("span", { class: "example-source" }, t("welcome.source", { path: shortPath(e.path) }))));
}

function shortPath(path) {
  const parts = path.split("/").filter(Boolean);
  return parts.length > 3 ? `…/${parts.slice(-3).join("/")}` : path;
}

// Asking an example: in its collection when the page asks over all of them (the question names a section there).
function ask(e) {
  document.dispatchEvent(new CustomEvent("docqa:ask", { detail: { question: e.question, collection: e.collection } }));
}

function filled(o) {
  const parts = [el("h2", { id: "welcome-title" }, t("welcome.title")),
    el("p", { class: "welcome-counts", "data-documents": o.documents },
      t("welcome.counts", { documents: plural("welcome.documents", o.documents), chunks: t("welcome.chunks", { n: number(o.chunks) }),
        collections: plural("welcome.collections", o.collections.length) })),
    el("p", { class: "welcome-languages muted" }, t("welcome.languages", { languages: languages(o.languages) }))];
  if (o.collections.length > 1) {
    parts.push(el("ul", { class: "welcome-collections" },
      o.collections.map((c) => el("li", {}, t("welcome.collection", { name: c.name, n: plural("welcome.documents", c.documents) })))));
  }
  parts.push(el("h3", {}, t("welcome.try")));
  parts.push(o.examples.length ? el("ul", { class: "examples" }, o.examples.map(example)) :
    el("p", { class: "muted" }, t("welcome.no_examples")));
  return parts;
}

async function empty() {
  const parts = [el("h2", { id: "welcome-title" }, t("welcome.empty_title"))];
  if (!can("editor")) return [...parts, el("p", { class: "muted" }, t("welcome.empty_reader"))];
  parts.push(el("p", {}, t("welcome.empty")));
  try {
    const limits = await getJSON("/documents:ingest");
    state.uploader = new Uploader({ limits, collections: [], onDone: () => {
      document.dispatchEvent(new CustomEvent("docqa:documents-added"));
      load();
    } });
    parts.push(state.uploader.node);
  } catch (error) {
    parts.push(el("p", { class: "error" }, error.message));
  }
  return parts;
}

// Shown while the conversation is empty and the Ask view is on screen (the upload area's ids are the
// Documents view's too: it is never in the page while that view is).
function showing() {
  return document.body.dataset.view === "ask" && !$("thread").querySelector(".turn");
}

async function render() {
  const thread = $("thread");
  const old = $("welcome");
  if (!showing() || !state.overview) {
    if (old) old.remove();
    state.uploader = null;
    return;
  }
  const o = state.overview;
  if (old && old.dataset.documents === String(o.documents) && old.lang === document.documentElement.lang && state.uploader) return; // an upload under way stays
  const box = el("section", { id: "welcome", class: "welcome", "aria-labelledby": "welcome-title",
    "data-documents": o.documents, lang: document.documentElement.lang });
  box.replaceChildren(...(o.documents ? filled(o) : await empty()));
  if (!showing()) return;
  const again = $("welcome");
  if (again) again.replaceWith(box);
  else thread.prepend(box);
}

async function load() {
  const ticket = ++state.ticket; // only the latest answer is shown
  const query = state.collection ? `?collection=${encodeURIComponent(state.collection)}` : "";
  try {
    const o = await getJSON(`/overview${query}`);
    if (ticket !== state.ticket) return;
    state.overview = o;
    state.uploader = null;
    render();
  } catch (error) {
    if (ticket !== state.ticket) return;
    $("thread").querySelector("#welcome")?.remove();
    if (showing()) $("thread").prepend(el("section", { id: "welcome", class: "welcome" },
      el("p", { class: "error" }, t("welcome.failed", { message: error.message }))));
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  new MutationObserver(() => {
    const turn = $("thread").querySelector(".turn");
    if (turn && $("welcome")) { $("welcome").remove(); state.uploader = null; }
    else if (!turn && !$("welcome")) render();
  }).observe($("thread"), { childList: true });
  document.addEventListener("docqa:view", () => render());
  document.addEventListener("docqa:collection", (e) => { state.collection = e.detail.collection; load(); });
  document.addEventListener("docqa:language", () => { state.uploader = null; render(); });
  document.addEventListener("docqa:signed-in", () => load());
  await caller.loaded;
  load();
});
