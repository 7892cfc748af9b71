// Who is signed in (the key's role, and its collections when scoped) with a sign-out button, shown only when the
// server uses keys: a keyless loopback server has no one to sign in or out.
import { call, getJSON } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";

register({
  en: {
    "who.signedIn": "Signed in: {role}", "who.scoped": "{role} · {collections}", "who.signOut": "Sign out",
    "who.label": "Who is signed in", "role.reader": "reader", "role.editor": "editor", "role.admin": "admin",
  },
  zh: {
    "who.signedIn": "已登录：{role}", "who.scoped": "{role} · {collections}", "who.signOut": "退出登录",
    "who.label": "当前登录身份", "role.reader": "读者", "role.editor": "编辑", "role.admin": "管理员",
  },
});

let current = null;

function render() {
  const box = document.getElementById("signed-in");
  if (!box) return;
  box.hidden = !(current && current.key_id);
  if (box.hidden) return box.replaceChildren();
  const role = t(`role.${current.role}`);
  const who = current.collections && current.collections.length ?
    t("who.scoped", { role, collections: current.collections.join(", ") }) : role;
  box.setAttribute("aria-label", t("who.label"));
  box.replaceChildren(
    el("span", { class: "who", title: current.key_id }, t("who.signedIn", { role: who })),
    el("button", { type: "button", id: "sign-out", onclick: signOut }, t("who.signOut")));
}

async function signOut() {
  try {
    await call("/logout", { method: "POST" });
  } finally {
    location.reload(); // the next call gets a 401, and the page asks for a key again
  }
}

async function start() {
  document.addEventListener("docqa:signed-in", (e) => { current = e.detail; render(); });
  document.addEventListener("docqa:language", render);
  try {
    current = await getJSON("/whoami");
  } catch (_) {
    current = null;
  }
  render();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
