// Keyboard shortcuts for the common moves, listed in a dialog under "?". A shortcut never fires while the
// human types in a field, nor with Ctrl/Alt/⌘ held (those are the browser's). "g" then a letter goes to a view.

import { $, el, typing } from "./dom.js";

const bindings = []; // {keys: "j" | "g b", label, run, when}
let pending = null; // the "g" of a two-key shortcut, until the next key or a second

/** Bind `keys` ("j", "?", "g b") to `run(event)`; `label` is what the help dialog says it does. `when()` says
 * whether it applies now (a view's own keys while it is on screen), so two views may bind the same key. */
export function bind(keys, label, run, when = () => true) {
  bindings.push({ keys, label, run, when });
}

function onKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  if (event.target.closest && event.target.closest("dialog[open]") && event.key !== "Escape") return;
  const key = event.key;
  const combo = pending ? `${pending} ${key}` : key;
  const found = bindings.find((b) => b.keys === combo && b.when());
  if (found) {
    pending = null;
    event.preventDefault();
    found.run(event);
    return;
  }
  if (!pending && bindings.some((b) => b.keys.startsWith(`${key} `))) {
    pending = key;
    setTimeout(() => {
      pending = null;
    }, 1500);
    return;
  }
  pending = null;
}

/** The "?" dialog: every binding, in the order bound. */
export function showHelp() {
  const dialog = $("shortcuts");
  const list = el("dl", { className: "shortcut-list" });
  for (const { keys, label } of bindings) {
    const term = el("dt");
    keys.split(" ").forEach((k, i) => term.append(i ? " then " : "", el("kbd", { text: k })));
    list.append(term, el("dd", { text: label }));
  }
  const close = el("button", { type: "button", className: "secondary", text: "Close" });
  close.addEventListener("click", () => dialog.close());
  dialog.replaceChildren(el("h2", { text: "Keyboard shortcuts" }), list, close);
  dialog.showModal();
  close.focus();
}

export function wireShortcuts() {
  document.addEventListener("keydown", onKey);
  bind("?", "Show these shortcuts", showHelp);
}
