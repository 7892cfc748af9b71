// Indexing a folder on the server (under api.ingest_roots) as a job, with live progress and its result.
import { ApiError, call } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { followJob, outcomes } from "./jobs.js";

register({
  en: {
    "ingest.title": "Index a folder on the server", "ingest.path": "Folder", "ingest.roots": "Allowed under: {roots}",
    "ingest.collection": "Collection", "ingest.start": "Index folder", "ingest.progress": "{done} of {total} files",
    "ingest.current": "now: {path}", "ingest.failed": "The job failed: {error}",
    "site.title": "Crawl a documentation site", "site.url": "URL", "site.hosts": "Allowed hosts: {hosts}",
    "site.start": "Crawl site", "site.progress": "{done} of {total} pages found",
  },
  zh: {
    "ingest.title": "索引服务器上的文件夹", "ingest.path": "文件夹", "ingest.roots": "允许的位置：{roots}",
    "ingest.collection": "集合", "ingest.start": "索引文件夹", "ingest.progress": "{done} / {total} 个文件",
    "ingest.current": "当前：{path}", "ingest.failed": "任务失败：{error}",
    "site.title": "抓取文档网站", "site.url": "网址", "site.hosts": "允许的主机：{hosts}",
    "site.start": "抓取网站", "site.progress": "已发现 {total} 页，完成 {done} 页",
  },
});

const SHOWN = ["added", "updated", "unchanged", "skipped", "failed"];

export class FolderIngest {
  constructor({ roots, onDone }) {
    this.onDone = onDone;
    this.path = el("input", { id: "ingest-path", required: true, list: "ingest-roots", value: roots[0] || "",
      autocomplete: "off" });
    this.collection = el("input", { id: "ingest-collection", list: "upload-collections", placeholder: t("upload.default") });
    this.bar = el("progress", { id: "ingest-bar", max: 1, value: 0, hidden: true, "aria-label": t("ingest.title") });
    this.progress = el("p", { id: "ingest-progress", class: "muted", "aria-live": "polite" });
    this.result = el("div", { id: "ingest-result" });
    this.button = el("button", { type: "submit" }, t("ingest.start"));
    this.node = el("form", { id: "ingest-form", class: "ingest", "aria-label": t("ingest.title") },
      el("h3", {}, t("ingest.title")),
      el("label", { for: "ingest-path" }, t("ingest.path")), this.path,
      el("datalist", { id: "ingest-roots" }, roots.map((r) => el("option", { value: r }))),
      el("label", { for: "ingest-collection" }, t("ingest.collection")), this.collection, this.button,
      el("p", { class: "muted hint" }, t("ingest.roots", { roots: roots.join(", ") })), this.bar, this.progress,
      this.result);
    this.node.addEventListener("submit", (e) => { e.preventDefault(); this.start(); });
  }

  async start() {
    this.button.disabled = true;
    this.result.replaceChildren();
    const body = this.body();
    if (this.collection.value.trim()) body.collection = this.collection.value.trim();
    try {
      const response = await call("/documents:ingest", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body) });
      const { job } = await response.json();
      this.bar.hidden = false;
      const done = await followJob(job.id, (j) => this.show(j.progress || {}));
      this.report(done);
    } catch (error) {
      this.result.replaceChildren(el("p", { class: "error" }, error instanceof ApiError ? error.message : String(error)));
    } finally {
      this.button.disabled = false;
      if (this.onDone) this.onDone();
    }
  }

  body() {
    return { paths: [this.path.value.trim()] };
  }

  show(p) {
    const total = p.total ?? 0;
    this.bar.max = Math.max(total, 1);
    this.bar.value = p.done || 0;
    this.progress.textContent = t(this.progressKey || "ingest.progress", { done: p.done || 0, total: p.total ?? "?" }) +
      (p.current ? ` · ${t("ingest.current", { path: p.current })}` : "");
  }

  report(job) {
    if (job.status === "failed") {
      this.result.replaceChildren(el("p", { class: "error" }, t("ingest.failed", { error: job.error || "" })));
      return;
    }
    this.bar.value = this.bar.max;
    const found = [...outcomes(job.result || {})];
    const count = (kind) => found.filter(([, o]) => o.result === kind).length;
    const problems = found.filter(([, o]) => o.result === "failed" || o.result === "skipped");
    this.result.replaceChildren(
      el("p", { class: "ingest-counts" }, SHOWN.map((k) => `${t(`result.${k}`)} ${count(k)}`).join(" · ")),
      el("ul", { class: "ingest-problems" }, problems.map(([path, o]) => el("li", { "data-result": o.result },
        el("strong", {}, t(`result.${o.result}`)), " ", path, o.reason ? `: ${o.reason}` : ""))));
  }
}

// Crawling a documentation site (a host api.ingest_urls names) as a job: the same progress and result as a folder.
export class SiteIngest extends FolderIngest {
  constructor({ hosts, onDone }) {
    super({ roots: [], onDone });
    this.progressKey = "site.progress";
    this.path = el("input", { id: "site-url", type: "url", required: true, placeholder: "https:// …/docs/",
      autocomplete: "off" });
    this.collection.id = "site-collection";
    this.bar.id = "site-bar";
    this.progress.id = "site-progress";
    this.result.id = "site-result";
    this.button.textContent = t("site.start");
    this.node.id = "site-form";
    this.node.setAttribute("aria-label", t("site.title"));
    this.node.replaceChildren(el("h3", {}, t("site.title")),
      el("label", { for: "site-url" }, t("site.url")), this.path,
      el("label", { for: "site-collection" }, t("ingest.collection")), this.collection, this.button,
      el("p", { class: "muted hint" }, t("site.hosts", { hosts: hosts.join(", ") })), this.bar, this.progress,
      this.result);
  }

  body() {
    return { urls: [this.path.value.trim()] };
  }
}
