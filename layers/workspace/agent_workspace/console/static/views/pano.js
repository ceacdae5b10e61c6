// The Pano view (`#/pano`, `#/pano/<id>`): docs every workspace of the account shares (account-wide: it works
// without a workspace), the open one's markdown rendered (core/markdown.js), its files, its comments and a form
// to add one.
//
// The list is read every round while the view is on screen. The open doc is read again when the list says it
// was saved or commented since: its markdown re-rendered only when it was saved, its comments reconciled by id,
// and the comment form never touched, so what the human types survives every refresh.

import * as store from "../core/store.js";
import { seg } from "../core/api.js";
import { el, fragment, outLink, reconcile, setText } from "../core/dom.js";
import { formatSize, plural, timeEl } from "../core/format.js";
import { clearError, done, showError } from "../core/feedback.js";
import { markdown } from "../core/markdown.js";
import { docsFrame, docReader, pickList } from "./docs/layout.js";

const PARTS = `
  <div class="pano-markdown"></div>
  <h3 id="pano-files-h">Files</h3>
  <p class="empty pano-files-empty">None.</p>
  <ul class="list pano-files" aria-labelledby="pano-files-h"></ul>
  <h3 id="pano-comments-h">Comments</h3>
  <p class="empty pano-comments-empty">None yet.</p>
  <ol class="list pano-comments" aria-labelledby="pano-comments-h"></ol>
  <form class="sub pano-comment-form" novalidate>
    <label for="pano-comment">Your comment</label>
    <textarea id="pano-comment" rows="3" maxlength="4000"></textarea>
    <button type="submit">Add comment</button>
  </form>`;

let frame = null;
let parts = null; // the open doc's parts, built once: {markdown, files, filesEmpty, comments, commentsEmpty, form}
let reader = null; // the doc the address names (reader.id), and {id, updatedAt, commentCount} of the one rendered

/** A workspace of the account by its title (the server names it by id), "You" for the human. */
function byName(id) {
  if (id === "human") return "You";
  const workspace = (store.get("workspaces") || []).find((w) => w.id === id);
  return workspace ? workspace.title : id;
}

function fileItem(file) {
  const li = el("li", {});
  updateFile(li, file);
  return li;
}

function updateFile(li, file) {
  // The link is time-limited and new at each read: only the href moves, the node stays.
  const link = li.firstElementChild;
  const fresh = outLink(file.url, file.name);
  if (!link || link.tagName !== fresh.tagName) {
    li.replaceChildren(fresh, el("span", { className: "meta" }));
  } else if (link.tagName === "A" && link.href !== fresh.href) {
    link.href = fresh.href;
  }
  setText(li.lastElementChild, ` ${formatSize(file.size)} · ${file.mimeType}`);
}

function commentItem(comment) {
  return el(
    "li",
    { className: "pano-comment" },
    el("p", { className: "meta" }, el("strong", { text: byName(comment.by) }), " · ", timeEl(comment.createdAt)),
    markdown(comment.comment),
  );
}

function render(doc, shown) {
  setText(frame.heading, doc.title);
  const metaSig = `${doc.color}|${doc.author}|${doc.updatedBy}|${doc.updatedAt}|${doc.expiresAt}`;
  if (frame.meta.dataset.sig !== metaSig) {
    frame.meta.dataset.sig = metaSig;
    frame.meta.replaceChildren(
      el("span", { className: `pano-color pano-color-${doc.color}`, text: doc.color }),
      ` · by ${byName(doc.author)}, last saved by ${byName(doc.updatedBy)} `,
      timeEl(doc.updatedAt),
      " · expires ",
      timeEl(doc.expiresAt),
    );
  }
  if (!shown || shown.id !== doc.id || shown.updatedAt !== doc.updatedAt) {
    parts.markdown.replaceChildren(markdown(doc.markdown));
  }
  const files = [...(doc.files || []), ...(doc.attachments || [])];
  reconcile(parts.files, files, (f) => f.name, fileItem, updateFile);
  parts.filesEmpty.hidden = files.length > 0;
  const comments = doc.comments || [];
  reconcile(parts.comments, comments, (c) => c.id, commentItem);
  parts.commentsEmpty.hidden = comments.length > 0;
  return { id: doc.id, updatedAt: doc.updatedAt, commentCount: doc.commentCount };
}

async function addComment(event) {
  event.preventDefault();
  const form = parts.form;
  const field = form.querySelector("textarea");
  const button = form.querySelector("button");
  const id = reader.id;
  button.disabled = true;
  try {
    await store.api("POST", `/api/pano/${seg(id)}/comments`, { comment: field.value });
    field.value = "";
    clearError(form);
    done("Comment added.");
    await reader.read(id, { focus: false });
    field.focus();
  } catch (error) {
    showError(error, "Adding the comment failed", form);
  } finally {
    button.disabled = false;
  }
}

function emptyParts() {
  parts.markdown.replaceChildren();
  parts.files.replaceChildren();
  parts.comments.replaceChildren();
  parts.form.querySelector("textarea").value = "";
  clearError(parts.form);
  delete frame.meta.dataset.sig;
}

export const pano = {
  name: "pano",
  label: "Pano",
  icon: "P",
  account: true,
  mount(root) {
    frame = docsFrame(root, {
      view: "pano",
      title: "Pano",
      hint: "Docs shared by every workspace of the account.",
      listLabel: "Pano docs",
      empty: "No pano docs.",
      choose: "Choose a doc to read it.",
    });
    frame.body.append(fragment(PARTS));
    const q = (selector) => frame.body.querySelector(selector);
    parts = {
      markdown: q(".pano-markdown"),
      files: q(".pano-files"),
      filesEmpty: q(".pano-files-empty"),
      comments: q(".pano-comments"),
      commentsEmpty: q(".pano-comments-empty"),
      form: q(".pano-comment-form"),
    };
    parts.form.addEventListener("submit", addComment);
    reader = docReader(frame, {
      load: (id) => store.api("GET", `/api/pano/${seg(id)}`),
      render,
      failed: () => ({ heading: "This pano doc", context: "Reading the pano doc failed" }),
      opened: (before) => {
        if (before !== null) emptyParts(); // another doc: what the human typed was for the old one
      },
      workspace: false, // the account's docs
    });
  },
  enter(route) {
    reader.enter(route);
  },
  leave() {},
  async refresh(current) {
    const docs = await store.api("GET", "/api/pano");
    if (!current()) return;
    const all = Array.isArray(docs) ? docs : [];
    pickList(frame, "pano", all, {
      key: (d) => d.id,
      label: (d) => d.title,
      describe: (d) => ({
        sig: `${d.color}|${d.author}|${d.commentCount}|${d.expiresAt}`,
        nodes: [
          `${d.color} · by ${byName(d.author)} · ${plural(d.commentCount, "comment")} · expires `,
          timeEl(d.expiresAt),
        ],
      }),
      selected: reader.id,
    });
    const { id, shown } = reader;
    const listed = id ? all.find((d) => d.id === id) : null;
    if (listed && shown && (listed.updatedAt !== shown.updatedAt || listed.commentCount !== shown.commentCount)) {
      await reader.read(id, { focus: false });
    }
  },
  reset() {
    reader.reset({ body: false }); // the doc's parts stay built, emptied
    emptyParts();
  },
};
