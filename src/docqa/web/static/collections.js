// The collections the caller sees, for the choosers of the Documents and Log views.
import { getJSON } from "./api.js";
import { el } from "./dom.js";

export async function collectionNames() {
  const { collections } = await getJSON("/collections");
  return collections.map((c) => c.name);
}

// Fill a <select> with "all" (first, value "") and each collection, keeping the current choice.
export function fillSelect(select, names, allLabel) {
  const current = select.value;
  select.replaceChildren(el("option", { value: "" }, allLabel), ...names.map((n) => el("option", { value: n }, n)));
  if (names.includes(current)) select.value = current;
}

// Fill a <datalist> with the collections (an upload may also name a new one).
export function fillList(list, names) {
  list.replaceChildren(...names.map((n) => el("option", { value: n })));
}
