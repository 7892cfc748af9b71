// The page's words in English and Chinese.  Each module registers its own strings, keyed by a dotted name
// ("ask.placeholder"), and asks for them with t(key, {vars}); a missing Chinese string falls back to English.
// The language comes from the browser (navigator.languages) unless the reader picked one (localStorage).
const STORE = "docqa.lang";
export const LANGUAGES = { en: "English", zh: "中文" };
const dictionaries = { en: {}, zh: {} };

export function register(strings) {
  for (const [lang, words] of Object.entries(strings)) Object.assign(dictionaries[lang] ||= {}, words);
}

export function language() {
  const chosen = localStorage.getItem(STORE);
  if (chosen && chosen in LANGUAGES) return chosen;
  const preferred = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
  for (const tag of preferred) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base in LANGUAGES) return base;
  }
  return "en";
}

// t("steps.hits", {n: 3}): "{n}" in the string is replaced by the value, as text.
export function t(key, vars = {}) {
  const words = dictionaries[language()][key] ?? dictionaries.en[key];
  if (words === undefined) return key;
  return words.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

// Elements in index.html name their words: data-i18n (text), data-i18n-placeholder, data-i18n-aria-label,
// data-i18n-title.
export function translate(root = document) {
  document.documentElement.lang = language() === "zh" ? "zh-CN" : "en";
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const attr of ["placeholder", "aria-label", "title"]) {
    const data = "i18n" + attr.split("-").map((w) => w[0].toUpperCase() + w.slice(1)).join("");
    for (const node of root.querySelectorAll(`[data-i18n-${attr}]`)) node.setAttribute(attr, t(node.dataset[data]));
  }
}

// Switching language re-translates the page and tells every module (event "docqa:language" on document).
export function setLanguage(lang) {
  if (!(lang in LANGUAGES)) return;
  localStorage.setItem(STORE, lang);
  translate();
  document.dispatchEvent(new CustomEvent("docqa:language", { detail: { lang } }));
}
