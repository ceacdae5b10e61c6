// What Memory, Skills and Pano share: a list of documents beside the one open (the list above it on a phone),
// the list kept in step by key (links to `#/<view>/<key>`, the open one aria-current), and the open document
// in an <article> whose parts are replaced only when what they say changed, read in order (`docReader`).

import * as store from "../../core/store.js";
import { el, reconcile, setAttr, setText } from "../../core/dom.js";
import { clearError, showError } from "../../core/feedback.js";
import * as router from "../../core/router.js";

/**
 * Build a view's frame into `root`: its h1, the list (named `listLabel`, with `empty` said when it has none)
 * and the article for the open document (hidden until one opens). Returns the parts the view fills.
 */
export function docsFrame(root, { view, title, hint, listLabel, empty, choose }) {
  const listHeading = el("h2", { className: "doc-index-h", text: listLabel });
  const list = el("ul", { className: "list doc-links", "aria-label": listLabel });
  const none = el("p", { className: "empty", text: empty, hidden: true });
  const index = el("nav", { className: "card doc-index", "aria-label": listLabel }, listHeading);
  if (hint) index.append(el("p", { className: "hint", text: hint }));
  index.append(none, list);
  const heading = el("h2", { className: "doc-title", tabindex: "-1", id: `${view}-doc-h` });
  const meta = el("p", { className: "meta doc-meta" });
  const body = el("div", { className: "doc-body" });
  const article = el("article", { className: "card doc", hidden: true }, heading, meta, body);
  article.setAttribute("aria-labelledby", heading.id);
  const placeholder = el("p", { className: "card doc-placeholder empty", text: choose });
  const h1 = el("h1", { className: "view-title", text: title });
  root.append(h1, el("div", { className: "docs" }, index, article, placeholder));
  return { view, list, none, article, heading, meta, body, placeholder };
}

/**
 * The list: one link per item to `#/<view>/<key>`, its label and a line about it; `selected` is marked
 * aria-current. Only what changed is touched, so a refresh keeps the human's focus and selection.
 */
export function pickList(frame, view, items, { key, label, describe, selected }) {
  reconcile(
    frame.list,
    items,
    key,
    (item) => {
      const link = el("a", { className: "doc-link", href: router.href({ view, id: String(key(item)) }) });
      return el("li", {}, link, el("p", { className: "meta" }));
    },
  );
  Array.from(frame.list.children).forEach((li, i) => {
    const item = items[i];
    const link = li.firstElementChild;
    setText(link, label(item));
    setAttr(link, "aria-current", String(key(item)) === selected ? "page" : null);
    const line = li.lastElementChild;
    const about = describe(item);
    if (typeof about === "string") setText(line, about);
    else if (line.dataset.sig !== about.sig) {
      line.dataset.sig = about.sig;
      line.replaceChildren(...about.nodes);
    }
  });
  frame.none.hidden = items.length > 0;
}

/** Show the open document's article (or the placeholder when none is open). */
export function showDoc(frame, open) {
  frame.article.hidden = !open;
  frame.placeholder.hidden = open;
}

/** Forget the list and the open document (its body too, unless the view keeps parts built there). */
export function clearFrame(frame, { body = true } = {}) {
  frame.list.replaceChildren();
  frame.none.hidden = true;
  frame.heading.textContent = "";
  frame.meta.replaceChildren();
  delete frame.meta.dataset.sig;
  if (body) frame.body.replaceChildren();
  showDoc(frame, false);
}

/**
 * The open document: which one the address names (`id`), what of it is rendered (`shown`), and its reads. A read
 * that answers after a newer one began, after the document closed or (for a workspace's documents) after another
 * workspace was chosen is dropped. A read that fails says why in the article, the body hidden (it is not what an
 * earlier document said under this name), and the next good read renders it again.
 *
 * The view says: `load(id)`, the document from the server; `render(doc, shown)`, the document into the frame's
 * heading, meta and body, returning what `changed(doc, shown)` compares at the next read (by default every read
 * renders: `render` keeps what did not change itself); `failed(id)`, {heading, context} for a failed read;
 * `opened(before)` and `closed()`, its own state when another document opens or none is open any more.
 * `workspace` (false for the account's documents): the documents are a workspace's.
 */
export function docReader(frame, { load, render, changed = () => true, failed, opened, closed, workspace = true }) {
  let reading = 0; // the latest read: an older one that answers late is dropped
  const reader = {
    id: null,
    shown: null,

    async read(id, { focus }) {
      const mine = ++reading;
      const workspaceId = store.get("workspaceId");
      try {
        const doc = await load(id);
        if (mine !== reading || reader.id !== id) return;
        if (workspace && workspaceId !== store.get("workspaceId")) return;
        if (!reader.shown || changed(doc, reader.shown)) {
          reader.shown = render(doc, reader.shown);
          frame.body.hidden = false;
          showDoc(frame, true);
        }
        clearError(frame.article);
        if (focus) frame.heading.focus();
      } catch (error) {
        if (mine !== reading) return;
        showDoc(frame, true);
        frame.body.hidden = true; // not what an earlier doc said under this name
        reader.shown = null; // the next good read renders it again
        const { heading, context } = failed(id);
        setText(frame.heading, heading);
        showError(error, context, frame.article);
      }
    },

    /** The route names a document (read it, focused) or none (close the one open). */
    enter(route) {
      if (route.id && route.id !== reader.id) {
        if (opened) opened(reader.id);
        reader.id = route.id;
        reader.shown = null;
        reader.read(route.id, { focus: true });
      } else if (!route.id && reader.id) {
        reader.close();
      }
    },

    close() {
      reader.id = null;
      reader.shown = null;
      reading += 1;
      if (closed) closed();
      showDoc(frame, false);
    },

    /** Forget everything shown (`body`: as clearFrame). */
    reset({ body = true } = {}) {
      const had = reader.id;
      reader.close();
      clearFrame(frame, { body });
      clearError(frame.article);
      // Another workspace: the address no longer names a document there (a deep link at sign-in is kept: none
      // was open).
      if (workspace && had && router.parse().view === frame.view) router.go({ view: frame.view }, { replace: true });
    },
  };
  return reader;
}
