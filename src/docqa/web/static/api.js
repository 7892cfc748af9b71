// The API, as the page calls it: the same endpoints as any client.  With API keys the page asks for a key
// once and trades it for the sign-in cookie (POST /login): HTTP-only, so no script of the page ever holds the
// key afterwards, and SameSite=Strict, so no other site's page can send it.  The page decides nothing else.
import { register, t } from "./i18n.js";

export const API = "/api/v1";

register({
  en: {
    "key.label": "This server needs an API key",
    "key.submit": "Sign in",
    "key.hint": "Kept for this browser session only, in a cookie no script can read.",
    "key.refused": "That key was refused: try another.",
    "key.ended": "Your sign-in has ended (the key may have been revoked): sign in again.",
    "key.failed": "Could not sign in: {message}",
  },
  zh: {
    "key.label": "此服务器需要 API 密钥",
    "key.submit": "登录",
    "key.hint": "仅在本次浏览器会话中保存，存于脚本无法读取的 Cookie 中。",
    "key.refused": "该密钥被拒绝：请换一个。",
    "key.ended": "您的登录已失效（密钥可能已被吊销）：请重新登录。",
    "key.failed": "无法登录：{message}",
  },
});

let waiting = null; // the pending sign-in, shared by every request that got a 401
let signedIn = false; // this page signed in once: a later 401 means the sign-in ended

// Show the key form until a key is accepted by POST /login (which sets the cookie); resolves then.
function askKey() {
  if (waiting) return waiting;
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  const hint = form.querySelector(".hint");
  hint.textContent = t(signedIn ? "key.ended" : "key.hint");
  form.hidden = false;
  input.focus();
  waiting = new Promise((resolve) => {
    const submit = async (e) => {
      e.preventDefault();
      const response = await fetch(API + "/login", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ key: input.value.trim() }),
      }).catch((error) => ({ ok: false, status: 0, json: async () => ({ error: { message: String(error) } }) }));
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        hint.textContent = response.status === 401 ? t("key.refused") :
          t("key.failed", { message: (body.error && body.error.message) || response.status });
        input.select();
        return;
      }
      const who = await response.json();
      form.removeEventListener("submit", submit);
      input.value = "";
      form.hidden = true;
      waiting = null;
      signedIn = true;
      document.dispatchEvent(new CustomEvent("docqa:signed-in", { detail: who }));
      resolve();
    };
    form.addEventListener("submit", submit);
  });
  return waiting;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// fetch (the sign-in cookie goes along); a 401 asks for a key, signs in and tries again.  Other errors: ApiError.
export async function call(path, options = {}) {
  for (;;) {
    const response = await fetch(API + path, { ...options, credentials: "same-origin" });
    if (response.status === 401) {
      await askKey();
      continue;
    }
    if (!response.ok) {
      let code = "http_" + response.status, message = response.statusText;
      try {
        const body = await response.json();
        if (body && body.error) ({ code, message } = body.error);
      } catch (_) { /* not JSON */ }
      throw new ApiError(response.status, code, message);
    }
    return response;
  }
}

export async function getJSON(path) {
  return (await call(path)).json();
}

// POST a JSON body and read the answer's Server-Sent Events (EventSource cannot POST):
// onEvent(type, data) for each event, in order.
export async function stream(path, body, onEvent, signal) {
  const response = await call(path, {
    method: "POST", signal,
    headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
    body: JSON.stringify(body),
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      dispatch(block, onEvent);
    }
  }
  if (buffer.trim()) dispatch(buffer, onEvent);
}

function dispatch(block, onEvent) {
  let type = "message";
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return;
  onEvent(type, JSON.parse(data.join("\n")));
}
