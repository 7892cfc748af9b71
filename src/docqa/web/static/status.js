// The Status view (editors): which chat model and embedder are in use and why, the index's size and counts,
// and each part's health (writer, workers, watch job), from GET /status.
import { getJSON } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { size } from "./format.js";
import { onShow } from "./views.js";

register({
  en: {
    "status.title": "Status", "status.refresh": "Refresh", "status.chat": "Chat model", "status.embedder": "Embedder",
    "status.index": "Index", "status.health": "Health", "status.extractive": "Extractive answerer (no chat model)",
    "status.bm25": "None: BM25 (keyword) search only", "status.source.configured": "configured",
    "status.source.ollama": "Ollama detected", "status.source.extractive": "extractive", "status.source.given": "given", "status.source.local": "local model",
    "status.why": "Why", "status.source": "Source", "status.search": "Search", "status.index_embedder": "Index vectors made by",
    "status.documents": "Documents", "status.chunks": "Chunks", "status.collections": "Collections", "status.failed": "Failed",
    "status.skipped": "Skipped", "status.bytes": "Size on disk", "status.source_bytes": "Source files",
    "status.vectors": "Vectors", "status.writer": "Writer", "status.workers": "Workers", "status.watch": "Watch job",
    "status.ok": "OK", "status.down": "Not running", "status.not_watching": "not watching", "status.version": "Version",
    "status.detail.writer": "{queued} queued", "status.detail.workers": "{busy} of {workers} busy, {queued} queued",
  },
  zh: {
    "status.title": "状态", "status.refresh": "刷新", "status.chat": "对话模型", "status.embedder": "向量模型", "status.index": "索引",
    "status.health": "运行状况", "status.extractive": "抽取式回答（无对话模型）", "status.bm25": "无：仅 BM25（关键词）检索",
    "status.source.configured": "已配置", "status.source.ollama": "检测到 Ollama", "status.source.extractive": "抽取式",
    "status.source.given": "指定", "status.source.local": "本地模型", "status.why": "原因", "status.source": "来源", "status.search": "检索",
    "status.index_embedder": "索引向量来自", "status.documents": "文档", "status.chunks": "分块", "status.collections": "集合",
    "status.failed": "失败", "status.skipped": "已跳过", "status.bytes": "磁盘占用", "status.source_bytes": "源文件",
    "status.vectors": "向量", "status.writer": "写入线程", "status.workers": "工作线程", "status.watch": "监视任务",
    "status.ok": "正常", "status.down": "未运行", "status.not_watching": "未监视", "status.version": "版本",
    "status.detail.writer": "排队 {queued}", "status.detail.workers": "{busy}/{workers} 忙，排队 {queued}",
  },
});

const $ = (id) => document.getElementById(id);

function card(id, title, rows) {
  return el("section", { id, class: "card" }, el("h3", {}, title),
    el("dl", { class: "meta" }, rows.filter(Boolean).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v ?? "")])));
}

function chatCard(chat) {
  return card("status-chat", t("status.chat"), [
    [t("status.chat"), el("strong", { class: "model-name" }, chat.name || t("status.extractive"))],
    [t("status.source"), t(`status.source.${chat.source}`)],
    [t("status.why"), el("span", { class: "why" }, chat.reason)],
  ]);
}

function embedderCard(e) {
  return card("status-embedder", t("status.embedder"), [
    [t("status.embedder"), el("strong", { class: "model-name" }, e.name || t("status.bm25"))],
    [t("status.search"), e.search],
    [t("status.why"), el("span", { class: "why" }, e.reason)],
    e.index_embedder ? [t("status.index_embedder"), e.index_embedder] : null,
  ]);
}

function indexCard(index) {
  const n = (k) => [t(`status.${k}`), el("span", { "data-count": k }, index[k])];
  return card("status-index", t("status.index"), [n("documents"), n("chunks"), n("collections"), n("failed"), n("skipped"),
    index.vectors !== null ? n("vectors") : null, [t("status.source_bytes"), size(index.source_bytes)],
    index.index_bytes !== null ? [t("status.bytes"), size(index.index_bytes)] : null]);
}

function health(ok, detail) {
  return el("span", { class: ok ? "ok" : "down", "data-ok": String(ok) }, ok ? t("status.ok") : t("status.down"),
    detail ? ` · ${detail}` : "");
}

function healthCard(h, version) {
  const watch = h.watch;
  return card("status-health", t("status.health"), [
    [t("status.writer"), health(h.writer.ok, t("status.detail.writer", h.writer))],
    [t("status.workers"), health(h.workers.ok, t("status.detail.workers", h.workers))],
    [t("status.watch"), watch ? health(watch.ok, [watch.collection, watch.error].filter(Boolean).join(" · ")) :
      t("status.not_watching")],
    [t("status.version"), version],
  ]);
}

async function open() {
  const section = $("view-status");
  const body = el("div", { id: "status-cards", class: "cards" });
  section.replaceChildren(el("div", { class: "filters" }, el("h2", {}, t("status.title")),
    el("button", { type: "button", id: "status-refresh", onclick: open }, t("status.refresh"))), body);
  try {
    const s = await getJSON("/status");
    body.replaceChildren(chatCard(s.chat), embedderCard(s.embedder), indexCard(s.index), healthCard(s.health, s.version));
  } catch (error) {
    body.replaceChildren(el("p", { class: "error" }, error.message));
  }
}

onShow("status", open);
document.addEventListener("docqa:language", () => {
  if (!document.getElementById("view-status").hidden) open();
});
