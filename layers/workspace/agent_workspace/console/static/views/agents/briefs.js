// The open agent's briefs: named texts it loads when a task calls for one. One is read at a time below the list
// (its text as written, in a <pre>: a brief is instructions, never rendered), and edited, renamed or deleted there;
// the form writes a new one or a new revision (`expectedRevision`, so an edit made meanwhile is not overwritten).

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, fragment, reconcile, setText, setAttr, replaceIfChanged } from "../../core/dom.js";
import { timeEl } from "../../core/format.js";
import { done } from "../../core/feedback.js";
import { attempt, confirming, dropConfirms, open, path, refs, refuse, setHidden, still } from "./common.js";

const MARKUP = `
<section class="part" aria-labelledby="agent-briefs-h">
  <h3 id="agent-briefs-h" tabindex="-1" data-ref="heading">Briefs</h3>
  <p class="empty" data-ref="empty" hidden>No briefs yet.</p>
  <ul class="list" aria-labelledby="agent-briefs-h" data-ref="list"></ul>
  <section class="brief" aria-labelledby="agent-brief-h" data-ref="brief" hidden>
    <h4 id="agent-brief-h" tabindex="-1" data-ref="briefHeading"></h4>
    <p class="meta" data-ref="briefMeta"></p>
    <pre class="doc" id="agent-brief-body" data-ref="briefBody"></pre>
    <div class="actions agent-write">
      <button type="button" class="secondary" data-ref="edit">Edit brief</button>
      <button type="button" class="danger" data-ref="delete">Delete brief</button>
    </div>
    <form class="row agent-write agent-brief-rename" novalidate data-ref="rename">
      <label for="agent-brief-new-name">New name</label>
      <input id="agent-brief-new-name" type="text" maxlength="64" autocomplete="off" spellcheck="false"
             data-ref="newName">
      <button type="submit">Rename brief</button>
    </form>
  </section>
  <details class="sub agent-write" data-ref="create">
    <summary data-ref="formHeading">New brief</summary>
    <form novalidate data-ref="form">
      <label for="agent-brief-name">Brief name</label>
      <input id="agent-brief-name" type="text" maxlength="64" autocomplete="off" spellcheck="false" data-ref="name">
      <label for="agent-brief-description">Brief description</label>
      <input id="agent-brief-description" type="text" maxlength="500" autocomplete="off" data-ref="description">
      <label for="agent-brief-body-input">Brief text</label>
      <textarea id="agent-brief-body-input" rows="8" class="mono" spellcheck="false" data-ref="body"></textarea>
      <label for="agent-brief-note">Note on this revision</label>
      <input id="agent-brief-note" type="text" maxlength="500" autocomplete="off" data-ref="note">
      <button type="submit">Save brief</button>
    </form>
  </details>
</section>`;

let ui = null;
let shown = null; // the brief read below the list
let opening = 0; // the latest open: an earlier one that answers after it is not shown
let editing = null; // {name, revision} while the form edits a brief

export const briefsPart = {
  name: "briefs",
  label: "Briefs",
  build() {
    const section = fragment(MARKUP).firstElementChild;
    ui = refs(section);
    ui.form.addEventListener("submit", save);
    ui.edit.addEventListener("click", edit);
    ui.rename.addEventListener("submit", rename);
    // The question names the brief shown when it was asked; it is dropped whenever another brief is shown, so
    // "Delete brief" deletes the one it named.
    confirming(ui.delete, () => `Delete brief ${shown ? shown.name : ""}, every revision, for everyone?`,
      "Delete brief", "Deleting the brief failed", deleteBrief);
    ui.create.addEventListener("toggle", () => {
      if (!ui.create.open && editing) stopEditing();
    });
    return section;
  },
  refresh: (current, id) => refreshBriefs(current, id),
  reset() {
    shown = null;
    opening += 1;
    dropConfirms(ui.brief);
    stopEditing();
    ui.create.open = false;
    ui.list.replaceChildren();
    setHidden(ui.brief, true);
    setHidden(ui.empty, true);
  },
};

function stopEditing() {
  editing = null;
  ui.form.reset();
  setText(ui.formHeading, "New brief");
}

async function refreshBriefs(current, id) {
  const data = await store.api("GET", path("/briefs"));
  if (!still(id, current)) return;
  const briefs = data.briefs || [];
  reconcile(ui.list, briefs, (b) => b.name, briefItem, updateBriefItem);
  setHidden(ui.empty, briefs.length > 0);
}

function briefItem(brief) {
  const li = el("li");
  const button = el("button", { type: "button", className: "linkish", text: brief.name });
  button.addEventListener("click", () => openBrief(li.dataset.key));
  li.append(button, el("p", { className: "meta" }));
  updateBriefItem(li, brief);
  return li;
}

function updateBriefItem(li, brief) {
  setAttr(li.querySelector("button"), "aria-current", Boolean(shown && shown.name === brief.name));
  describe(li.querySelector(".meta"), brief);
}

/** "How to ship a hotfix · revision 2 · by … · 3 days ago", unchanged nodes left alone. */
function describe(node, brief, withAuthor = false) {
  const head = `${brief.description ? `${brief.description} · ` : ""}revision ${brief.revision} · ` +
    `${withAuthor && brief.updatedBy ? `by ${brief.updatedBy} · ` : ""}`;
  replaceIfChanged(node, [head, timeEl(brief.updatedAt)], JSON.stringify([head, brief.updatedAt]));
}

async function openBrief(name, keepFocus = false) {
  const id = open.id;
  const mine = ++opening;
  dropConfirms(ui.brief); // a question about the brief shown so far must not outlive it
  await attempt(`Reading brief ${name} failed`, ui.list.parentElement, null, async () => {
    const brief = await store.api("GET", path(`/briefs/${seg(name)}`));
    if (open.id !== id || mine !== opening) return;
    dropConfirms(ui.brief); // asked while this one was read: it named the brief shown before
    shown = brief;
    setText(ui.briefHeading, brief.name);
    describe(ui.briefMeta, brief, true);
    setText(ui.briefBody, brief.body);
    ui.rename.reset();
    setHidden(ui.brief, false);
    for (const li of ui.list.children) setAttr(li.querySelector("button"), "aria-current", li.dataset.key === name);
    if (!keepFocus) ui.briefHeading.focus();
  });
}

function edit() {
  if (!shown) return;
  editing = { name: shown.name, revision: shown.revision };
  ui.name.value = shown.name;
  ui.description.value = shown.description || "";
  ui.body.value = shown.body;
  setText(ui.formHeading, `Edit brief ${shown.name}`);
  ui.create.open = true;
  ui.body.focus();
}

async function save(event) {
  event.preventDefault();
  const name = ui.name.value.trim();
  if (!name) {
    refuse("give the brief a name", "Saving the brief", ui.form, ui.name);
    return;
  }
  const body = { body: ui.body.value, description: ui.description.value };
  const note = ui.note.value.trim();
  if (note) body.note = note;
  if (editing && editing.name === name) body.expectedRevision = editing.revision;
  const id = open.id;
  await attempt("Saving the brief failed", ui.form, event.submitter, async () => {
    const saved = await store.api("PUT", path(`/briefs/${seg(name)}`), body);
    if (open.id !== id) return;
    stopEditing();
    ui.create.open = false;
    done(`Brief ${saved.name} saved (revision ${saved.revision}).`);
    await Promise.all([refreshBriefs(null, id), openBrief(saved.name, true)]);
    ui.briefHeading.focus();
  });
}

async function rename(event) {
  event.preventDefault();
  const brief = shown;
  if (!brief) return;
  const newName = ui.newName.value.trim();
  if (!newName) {
    refuse("write the brief's new name", "Renaming the brief", ui.rename, ui.newName);
    return;
  }
  const id = open.id;
  await attempt("Renaming the brief failed", ui.rename, event.submitter, async () => {
    const renamed = await store.api("POST", path(`/briefs/${seg(brief.name)}/rename`), { newName });
    if (open.id !== id) return;
    done(`Brief ${renamed.previousName} is now ${renamed.name}.`);
    await Promise.all([refreshBriefs(null, id), openBrief(renamed.name, true)]);
  });
}

async function deleteBrief() {
  const brief = shown;
  if (!brief) return;
  const id = open.id;
  await store.api("DELETE", path(`/briefs/${seg(brief.name)}`));
  if (open.id !== id) return;
  shown = null;
  setHidden(ui.brief, true);
  done(`Brief ${brief.name} deleted.`);
  await refreshBriefs(null, id);
  ui.heading.focus();
}
