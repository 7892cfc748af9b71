// The Documents view: the list (path, type, chunks, size, indexed at, status or error) with a search, a status
// and a collection filter and "load more" for long lists; for editors, delete, add files and folders, and index
// a server folder.
import { ApiError, call, getJSON } from "./api.js";
import { collectionNames, fillSelect } from "./collections.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { FolderIngest, SiteIngest } from "./ingest.js";
import { size, when } from "./format.js";
import { Uploader } from "./upload.js";
import { can, loadCaller, onShow } from "./views.js";

register({
  en: {
    "docs.title": "Documents", "docs.search": "Search path or title", "docs.status": "Status", "docs.any": "any status",
    "docs.ok": "indexed", "docs.error": "failed", "docs.skipped": "skipped", "docs.collection": "Collection",
    "docs.all": "All collections", "docs.path": "Path", "docs.type": "Type", "docs.chunks": "Chunks", "docs.size": "Size",
    "docs.indexed": "Indexed at", "docs.state": "Status or error", "docs.actions": "Actions", "docs.delete": "Delete",
    "docs.confirm": "Remove {path} from the index?", "docs.more": "Load more", "docs.count": "{shown} of {total} documents", "docs.count_files": "{shown} of {total} files",
    "docs.none": "No documents match.", "docs.removed": "Removed {path}.",
  },
  zh: {
    "docs.title": "文档", "docs.search": "搜索路径或标题", "docs.status": "状态", "docs.any": "全部状态", "docs.ok": "已索引",
    "docs.error": "失败", "docs.skipped": "已跳过", "docs.collection": "集合", "docs.all": "全部集合", "docs.path": "路径",
    "docs.type": "类型", "docs.chunks": "分块", "docs.size": "大小", "docs.indexed": "索引时间", "docs.state": "状态或错误",
    "docs.actions": "操作", "docs.delete": "删除", "docs.confirm": "从索引中移除 {path}？", "docs.more": "加载更多",
    "docs.count": "显示 {shown} / {total} 个文档", "docs.count_files": "显示 {shown} / {total} 个文件", "docs.none": "没有匹配的文档。", "docs.removed": "已移除 {path}。",
  },
});

const PAGE = 50;
const STATUSES = ["ok", "error", "skipped"];
const view = { built: null, offset: 0, uploader: null, timer: null };
const $ = (id) => document.getElementById(id);

function build(section) {
  const search = el("input", { id: "docs-search", type: "search", placeholder: t("docs.search"), "aria-label": t("docs.search") });
  const status = el("select", { id: "docs-status", "aria-label": t("docs.status") }, el("option", { value: "" }, t("docs.any")),
    STATUSES.map((s) => el("option", { value: s }, t(`docs.${s}`))));
  const collection = el("select", { id: "docs-collection", "aria-label": t("docs.collection") },
    el("option", { value: "" }, t("docs.all")));
  search.addEventListener("input", () => { clearTimeout(view.timer); view.timer = setTimeout(() => load(true), 250); });
  status.addEventListener("change", () => load(true));
  collection.addEventListener("change", () => load(true));
  const heads = ["docs.path", "docs.collection", "docs.type", "docs.chunks", "docs.size", "docs.indexed", "docs.state"];
  if (can("editor")) heads.push("docs.actions");
  section.replaceChildren(
    el("div", { id: "docs-tools", class: "keeper-tools" }),
    el("h2", {}, t("docs.title")),
    el("div", { class: "filters" }, search, status, collection),
    el("p", { id: "docs-message", class: "muted", role: "status" }),
    el("div", { class: "table-wrap" }, el("table", { id: "docs-table", class: "data" },
      el("thead", {}, el("tr", {}, heads.map((h) => el("th", { scope: "col" }, t(h))))), el("tbody", { id: "docs-rows" }))),
    el("p", {}, el("button", { id: "docs-more", type: "button", hidden: true, onclick: () => load(false) }, t("docs.more"))));
}

async function refreshCollections() {
  const names = await collectionNames();
  fillSelect($("docs-collection"), names, t("docs.all"));
  if (view.uploader) view.uploader.setCollections(names);
  return names;
}

async function load(reset) {
  if (reset) view.offset = 0;
  const params = new URLSearchParams({ offset: view.offset, limit: PAGE });
  if ($("docs-search").value.trim()) params.set("q", $("docs-search").value.trim());
  if ($("docs-status").value) params.set("status", $("docs-status").value);
  if ($("docs-collection").value) params.set("collection", $("docs-collection").value);
  const ticket = view.ticket = (view.ticket || 0) + 1; // only the latest filters' answer is shown
  try {
    const body = await getJSON(`/documents?${params}`);
    if (ticket !== view.ticket) return;
    const rows = $("docs-rows");
    if (reset) rows.replaceChildren();
    rows.append(...body.documents.map(row));
    view.offset += body.documents.length;
    $("docs-more").hidden = view.offset >= body.total;
    // skipped and failed files are not documents: "documents" counts only when the list holds indexed ones alone
    const key = $("docs-status").value === "ok" ? "docs.count" : "docs.count_files";
    $("docs-message").textContent = body.total ? t(key, { shown: view.offset, total: body.total }) : t("docs.none");
  } catch (error) {
    $("docs-message").textContent = error.message;
  }
}

function statusCell(doc) {
  const word = t(`docs.${STATUSES.includes(doc.status) ? doc.status : "error"}`);
  return el("td", { class: `state state-${doc.status}` }, el("strong", {}, word), doc.status !== "ok" && doc.error ? `: ${doc.error}` : "");
}

function row(doc) {
  const node = el("tr", { "data-id": doc.document_id, "data-status": doc.status, "data-path": doc.path },
    el("td", { class: "path", title: doc.path }, doc.path), el("td", {}, doc.collection), el("td", {}, doc.type),
    el("td", { class: "num" }, doc.chunks), el("td", { class: "num" }, size(doc.size)), el("td", {}, when(doc.indexed_at)),
    statusCell(doc));
  if (can("editor")) {
    node.append(el("td", {}, el("button", { type: "button", class: "delete", "aria-label": `${t("docs.delete")} ${doc.path}`,
      onclick: () => remove(doc, node) }, t("docs.delete"))));
  }
  return node;
}

async function remove(doc, node) {
  if (!window.confirm(t("docs.confirm", { path: doc.path }))) return;
  try {
    await call(`/documents/${encodeURIComponent(doc.document_id)}`, { method: "DELETE" });
    node.remove();
    view.offset = Math.max(0, view.offset - 1);
    $("docs-message").textContent = t("docs.removed", { path: doc.path });
  } catch (error) {
    $("docs-message").textContent = error instanceof ApiError ? error.message : String(error);
  }
}

// Adding documents: the upload panel and, when the server has ingest roots (hosts), the folder (site) ingest form.
async function editorTools(names) {
  if (!can("editor")) return;
  const limits = await getJSON("/documents:ingest");
  const done = () => { refreshCollections(); load(true); };
  view.uploader = new Uploader({ limits, collections: names, onDone: done });
  const tools = [view.uploader.node];
  if (limits.ingest_roots.length) tools.push(new FolderIngest({ roots: limits.ingest_roots, onDone: done }).node);
  if ((limits.ingest_urls || []).length) tools.push(new SiteIngest({ hosts: limits.ingest_urls, onDone: done }).node);
  $("docs-tools").replaceChildren(...tools);
}

async function open() {
  const section = document.getElementById("view-documents");
  const lang = document.documentElement.lang || "en";
  if (view.built !== lang) { // built once per language (switching language builds it again)
    view.built = lang;
    view.uploader = null;
    build(section);
    try {
      await editorTools(await refreshCollections());
    } catch (error) {
      $("docs-message").textContent = error.message;
    }
  } else {
    refreshCollections().catch(() => {});
  }
  load(true);
}

onShow("documents", open);
document.addEventListener("docqa:language", () => {
  if (!document.getElementById("view-documents").hidden) open();
});
document.addEventListener("docqa:signed-in", async () => { // another key, maybe another role: build it again
  view.built = null;
  await loadCaller();
  if (!document.getElementById("view-documents").hidden) open();
});
