// The open agent's memories: what it wrote down about the person and its work (its text as written, in a <pre>),
// searched, pinned (loaded whole, before the index), written by the person, forgotten with a reason and restored
// within 30 days. A share without its memories shows none of them. Items are reconciled by id, so a reason being
// typed into a memory's "forget" field survives the next refresh.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, fragment, nextId, reconcile, setText, setAttr, replaceIfChanged } from "../../core/dom.js";
import { exact, timeEl } from "../../core/format.js";
import { announce, done } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";
import { PAGE, access, attempt, open, path, refs, refuse, setHidden, still } from "./common.js";

const TYPES = ["user", "feedback", "project", "reference"];

const MARKUP = `
<section class="part" aria-labelledby="agent-memories-h">
  <h3 id="agent-memories-h" tabindex="-1" data-ref="heading">Memories</h3>
  <p class="meta" data-ref="closed" hidden>The owner did not share this agent's memories with you.</p>
  <div data-ref="box">
    <form class="agent-fields" role="search" aria-label="Memory search" novalidate data-ref="search">
      <div class="field grow">
        <label for="agent-memory-query">Search memories</label>
        <input id="agent-memory-query" type="search" maxlength="200" autocomplete="off" data-ref="query">
      </div>
      <div class="field">
        <label for="agent-memory-type">Of type</label>
        <select id="agent-memory-type" data-ref="type"><option value="">Any type</option></select>
      </div>
      <div class="field buttons">
        <button type="submit">Search</button>
      </div>
    </form>
    <p class="empty" data-ref="empty" hidden>No memories yet.</p>
    <ul class="list" aria-label="Memories of the agent" data-ref="list"></ul>
    <p class="meta" data-ref="more" hidden>Showing the 50 most recent: search to find others.</p>
    <details class="sub agent-write" data-ref="create">
      <summary>Write a memory</summary>
      <form novalidate data-ref="form">
        <label for="agent-memory-name">Memory name</label>
        <input id="agent-memory-name" type="text" maxlength="64" autocomplete="off" spellcheck="false" data-ref="name">
        <label for="agent-memory-new-type">Memory type</label>
        <select id="agent-memory-new-type" data-ref="newType"></select>
        <label for="agent-memory-description">Memory description</label>
        <input id="agent-memory-description" type="text" maxlength="500" autocomplete="off" data-ref="description">
        <label for="agent-memory-body">Memory text</label>
        <textarea id="agent-memory-body" rows="4" data-ref="body"></textarea>
        <button type="submit">Save memory</button>
      </form>
    </details>
    <h3 id="agent-forgotten-h" class="agent-forgotten-h">Forgotten</h3>
    <p class="hint">A forgotten memory can be restored for 30 days.</p>
    <p class="empty" data-ref="forgottenEmpty" hidden>Nothing forgotten.</p>
    <ul class="list" aria-labelledby="agent-forgotten-h" data-ref="forgotten"></ul>
  </div>
</section>`;

let ui = null;
const search = { query: "", type: "" }; // as last submitted

export const memoriesPart = {
  name: "memories",
  label: "Memories",
  build() {
    const section = fragment(MARKUP).firstElementChild;
    ui = refs(section);
    ui.type.append(...TYPES.map((type) => el("option", { value: type, text: type })));
    ui.newType.append(...TYPES.map((type) => el("option", { value: type, text: type })));
    ui.search.addEventListener("submit", searchMemories);
    ui.form.addEventListener("submit", write);
    return section;
  },
  async refresh(current, id) {
    const shared = access().memory;
    setHidden(ui.closed, shared);
    setHidden(ui.box, !shared);
    if (shared) await Promise.all([refreshMemories(current, id), refreshForgotten(current, id)]);
  },
  reset() {
    search.query = "";
    search.type = "";
    ui.create.open = false;
    ui.list.replaceChildren();
    ui.forgotten.replaceChildren();
    for (const node of [ui.empty, ui.more, ui.forgottenEmpty]) node.hidden = true;
  },
};

async function refreshMemories(current, id) {
  const params = new URLSearchParams({ limit: String(PAGE), sort: "recent" });
  if (search.query) params.set("query", search.query);
  if (search.type) params.set("type", search.type);
  const asked = `${params}`;
  const data = await store.api("GET", path(`/memories?${asked}`));
  if (!still(id, current)) return;
  const memories = data.memories || [];
  reconcile(ui.list, memories, (m) => m.id, memoryItem, updateMemoryItem);
  setText(ui.empty, search.query || search.type ? "No memory matches." : "No memories yet.");
  setHidden(ui.empty, memories.length > 0);
  setHidden(ui.more, !data.nextCursor);
}

function memoryItem(memory) {
  const li = el("li", { className: "memory" });
  const pin = el("button", { type: "button", className: "secondary small pin" });
  pin.addEventListener("click", (event) => pinMemory(li, event.currentTarget));
  const reasonId = nextId("agent-forget");
  const form = el("form", { className: "row forget", noValidate: true });
  form.append(
    el("label", { htmlFor: reasonId, text: "Reason to forget" }),
    el("input", { id: reasonId, type: "text", maxLength: 500, autocomplete: "off" }),
    el("button", { type: "submit", className: "danger small", text: "Forget" }),
  );
  form.addEventListener("submit", (event) => forget(event, li, form));
  li.append(
    el("h4", { className: "memory-head" }),
    el("p", { className: "meta description" }),
    el("pre", { className: "doc body" }),
    el("p", { className: "meta facts" }),
    el("div", { className: "actions" }, pin),
    form,
  );
  updateMemoryItem(li, memory);
  return li;
}

function updateMemoryItem(li, memory) {
  li.memory = memory;
  replaceIfChanged(
    li.querySelector(".memory-head"),
    [
      el("span", { text: memory.name }),
      " ",
      el("span", { className: "badge", text: memory.type }),
      memory.pinned ? el("span", { className: "badge pinned", text: "Pinned" }) : "",
    ],
    JSON.stringify([memory.name, memory.type, memory.pinned]),
  );
  setText(li.querySelector(".description"), memory.description || "");
  setText(li.querySelector(".body"), memory.body);
  replaceIfChanged(
    li.querySelector(".facts"),
    [`revision ${memory.revision} · written by ${memory.writtenBy} · updated `, timeEl(memory.updatedAt)],
    JSON.stringify([memory.revision, memory.writtenBy, memory.updatedAt]),
  );
  const pin = li.querySelector(".pin");
  setText(pin, memory.pinned ? "Unpin" : "Pin");
  setAttr(pin, "aria-label", `${memory.pinned ? "Unpin" : "Pin"} ${memory.name}`);
  const form = li.querySelector(".forget");
  setAttr(form.querySelector("input"), "aria-label", `Reason to forget ${memory.name}`);
  setAttr(form.querySelector("button"), "aria-label", `Forget ${memory.name}`);
  const canEdit = access().canEdit;
  setHidden(pin, !canEdit);
  setHidden(form, !canEdit);
}

async function pinMemory(li, button) {
  const memory = li.memory;
  const id = open.id;
  await attempt(`${memory.pinned ? "Unpinning" : "Pinning"} ${memory.name} failed`, li, button, async () => {
    const changed = await store.api("PUT", path(`/memories/${seg(memory.name)}/pinned`), { pinned: !memory.pinned });
    if (open.id !== id) return;
    done(changed.pinned ? `${memory.name} pinned: it loads whole, before the index.` : `${memory.name} unpinned.`);
    await refreshMemories(null, id);
  });
}

async function forget(event, li, form) {
  event.preventDefault();
  const memory = li.memory;
  const input = form.querySelector("input");
  const reason = input.value.trim();
  if (!reason) {
    refuse(`say why ${memory.name} should be forgotten`, "Forgetting the memory", form, input);
    return;
  }
  const id = open.id;
  await attempt(`Forgetting ${memory.name} failed`, form, event.submitter, async () => {
    const gone = await store.api("POST", path(`/memories/${seg(memory.name)}/forget`), { reason });
    if (open.id !== id) return;
    done(`${memory.name} forgotten; it can be restored until ${exact(gone.restorableUntil)}.`);
    await Promise.all([refreshMemories(null, id), refreshForgotten(null, id)]);
    ui.heading.focus();
  });
}

async function refreshForgotten(current, id) {
  const data = await store.api("GET", path("/forgotten"));
  if (!still(id, current)) return;
  const forgotten = data.forgotten || [];
  reconcile(ui.forgotten, forgotten, (m) => m.id, forgottenItem, updateForgottenItem);
  setHidden(ui.forgottenEmpty, forgotten.length > 0);
}

function forgottenItem(memory) {
  const li = el("li");
  const restore = el("button", { type: "button", className: "secondary small", text: "Restore" });
  restore.setAttribute("aria-label", `Restore ${memory.name}`);
  restore.addEventListener("click", (event) => restoreMemory(li, event.currentTarget));
  li.append(el("p", { className: "forgotten-head" }), el("p", { className: "meta" }), restore);
  updateForgottenItem(li, memory);
  return li;
}

function updateForgottenItem(li, memory) {
  li.memory = memory;
  replaceIfChanged(
    li.querySelector(".forgotten-head"),
    [
      el("strong", { text: memory.name }),
      " ",
      el("span", { className: "badge", text: memory.type }),
      memory.description ? ` ${memory.description}` : "",
    ],
    JSON.stringify([memory.name, memory.type, memory.description]),
  );
  replaceIfChanged(
    li.querySelector(".meta"),
    [
      "forgotten ",
      timeEl(memory.forgottenAt),
      `: ${memory.reason} · restorable until ${exact(memory.restorableUntil)}`,
    ],
    JSON.stringify([memory.forgottenAt, memory.reason, memory.restorableUntil]),
  );
  setHidden(li.querySelector("button"), !access().canEdit);
}

async function restoreMemory(li, button) {
  const memory = li.memory;
  const id = open.id;
  await attempt(`Restoring ${memory.name} failed`, li, button, async () => {
    await store.api("POST", path(`/forgotten/${seg(memory.id)}/restore`));
    if (open.id !== id) return;
    done(`${memory.name} restored.`);
    await Promise.all([refreshMemories(null, id), refreshForgotten(null, id)]);
    ui.heading.focus();
  });
}

function searchMemories(event) {
  event.preventDefault();
  search.query = ui.query.value.trim();
  search.type = ui.type.value;
  ui.list.replaceChildren();
  announce(search.query || search.type ? "Searching the memories…" : "Showing every memory…");
  kick();
}

async function write(event) {
  event.preventDefault();
  const name = ui.name.value.trim();
  if (!name) {
    refuse("give the memory a name", "Saving the memory", ui.form, ui.name);
    return;
  }
  const body = { body: ui.body.value, mode: "create", type: ui.newType.value, description: ui.description.value };
  const id = open.id;
  await attempt("Saving the memory failed", ui.form, event.submitter, async () => {
    await store.api("PUT", path(`/memories/${seg(name)}`), body);
    if (open.id !== id) return;
    ui.form.reset();
    ui.create.open = false;
    done(`Memory ${name} saved.`);
    await refreshMemories(null, id);
    ui.heading.focus();
  });
}
