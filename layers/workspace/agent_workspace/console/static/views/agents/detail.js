// The open agent: its header (name, @handle, revision, what the person may do), the owner's switches (lock the
// prompt, archive, delete), the edit form, accepting an agent shared with this account, the credential, and one
// part at a time below (prompt, profiles, briefs, memories, activity, sharing). Only the part on screen is read,
// in the console's refresh round.

import * as store from "../../core/store.js";
import * as router from "../../core/router.js";
import { ApiError } from "../../core/api.js";
import { el, fragment, setText, typing, replaceIfChanged } from "../../core/dom.js";
import { timeEl } from "../../core/format.js";
import { announce, done } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";
import { access, attempt, confirming, dropConfirms, open, path, refs, setHidden, still } from "./common.js";
import { showListError } from "./list.js";
import * as credential from "./credential.js";
import { promptPart } from "./prompt.js";
import { profilesPart } from "./profiles.js";
import { briefsPart } from "./briefs.js";
import { memoriesPart } from "./memories.js";
import { activityPart, sharingPart } from "./sharing.js";

// A part: {name, label, build() → its section, refresh(current, id, full), reset(), render?(agent)}.
const PARTS = [promptPart, profilesPart, briefsPart, memoriesPart, activityPart, sharingPart];

const MARKUP = `
<section class="card agent-detail" id="agent-detail" aria-labelledby="agent-h" data-ref="card" hidden>
  <div class="detail-head">
    <h2 id="agent-h" tabindex="-1" data-ref="heading"></h2>
    <button type="button" class="secondary" data-ref="close">Close agent</button>
  </div>
  <p class="meta" id="agent-meta" data-ref="meta"></p>
  <p class="flags" data-ref="flags"></p>
  <p class="text agent-description" id="agent-description" data-ref="description"></p>

  <section class="agent-notice" aria-labelledby="agent-accept-h" data-ref="acceptBox" hidden>
    <h3 id="agent-accept-h">Shared with you: accept it first</h3>
    <p data-ref="acceptText"></p>
    <form novalidate data-ref="acceptForm">
      <div class="check">
        <input id="agent-accept-follow" type="checkbox" aria-describedby="agent-accept-follow-hint" data-ref="follow">
        <label for="agent-accept-follow">Follow new versions of its prompt</label>
        <p id="agent-accept-follow-hint" class="hint">Unchecked, you keep running the version live now until you
          accept again.</p>
      </div>
      <button type="submit">Accept agent</button>
    </form>
  </section>

  <div class="agent-owner agent-switches" data-ref="switches">
    <div class="actions">
      <button type="button" class="secondary" data-ref="lock">Lock prompt</button>
      <button type="button" class="secondary" data-ref="archive">Archive agent</button>
      <button type="button" class="danger" data-ref="delete">Delete agent</button>
    </div>
  </div>

  <details class="sub agent-write" data-ref="edit">
    <summary>Edit name, description, @handle</summary>
    <form novalidate data-ref="editForm">
      <label for="agent-edit-name">Name</label>
      <input id="agent-edit-name" type="text" maxlength="200" autocomplete="off" data-ref="editName">
      <label for="agent-edit-description">Description</label>
      <textarea id="agent-edit-description" rows="2" data-ref="editDescription"></textarea>
      <div class="agent-owner">
        <label for="agent-edit-slug">@handle</label>
        <input id="agent-edit-slug" type="text" maxlength="64" autocomplete="off" spellcheck="false"
               aria-describedby="agent-edit-slug-hint" data-ref="editSlug">
        <p id="agent-edit-slug-hint" class="hint">Lowercase letters, digits and single hyphens. Mentions written
          with the old handle stop pointing here.</p>
      </div>
      <button type="submit">Save changes</button>
    </form>
  </details>

  <div data-ref="credential"></div>

  <div class="agent-parts" data-ref="partsBox">
    <div class="views parts" role="group" aria-label="Parts of the agent" data-ref="parts"></div>
  </div>
</section>`;

let ui = null;
let part = "prompt"; // the part on screen; it stays chosen from one agent to the next
const sections = new Map(); // part name → its section

/** The open agent's card, built once with its parts. */
export function build() {
  const card = fragment(MARKUP).firstElementChild;
  ui = refs(card);
  ui.credential.replaceWith(credential.build());
  for (const one of PARTS) {
    const button = el("button", { type: "button", text: one.label, "aria-pressed": String(one.name === part) });
    button.dataset.part = one.name;
    button.addEventListener("click", () => setPart(one.name));
    ui.parts.append(button);
    const section = one.build();
    setHidden(section, one.name !== part);
    sections.set(one.name, section);
    ui.partsBox.append(section);
  }
  ui.close.addEventListener("click", () => router.go({ view: "agents" }));
  card.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !typing(event.target) && !event.defaultPrevented) router.go({ view: "agents" });
  });
  // Filled as the summary is clicked, before the form opens: `toggle` fires later, as a task of its own, and would
  // overwrite what the person has started typing (Enter and Space on a summary click it too).
  ui.edit.querySelector("summary").addEventListener("click", () => {
    if (!ui.edit.open && open.agent) fillEdit(open.agent);
  });
  ui.editForm.addEventListener("submit", saveEdit);
  ui.lock.addEventListener("click", switchAction("prompt-lock"));
  ui.archive.addEventListener("click", switchAction("archived"));
  confirming(ui.delete, "Delete this agent for everyone, with all it holds? This cannot be undone.",
    "Delete for good", "Deleting the agent failed", deleteAgent);
  ui.acceptForm.addEventListener("submit", accept);
  return card;
}

/** Open agent `id` (by id or @handle); `name` is what the list calls it until it is read. */
export function openAgent(id, name) {
  if (open.id === id) return;
  forget();
  open.id = id;
  setText(ui.heading, name || id);
  setHidden(ui.card, false);
  ui.heading.focus();
  kick();
}

/** Close the open agent; returns its id (for the list to take the focus back to it). */
export function closeAgent() {
  const id = open.id;
  forget();
  setHidden(ui.card, true);
  return id;
}

export const isOpen = () => open.id !== null;

export function reset() {
  closeAgent();
  part = "prompt";
  showPart();
}

/** One round's share: the agent's header, then the part on screen. */
export async function refresh(current, full) {
  if (!open.id) return;
  await refreshAgent(current);
  const who = access();
  if (!open.id || !current() || !open.agent || who.awaiting) return;
  await PARTS.find((one) => one.name === part).refresh(current, open.id, full);
}

/** Forget everything shown of the open agent (another one opens, or none). */
function forget() {
  open.id = null;
  open.agent = null;
  for (const form of ui.card.querySelectorAll("form")) form.reset();
  dropConfirms(ui.card);
  for (const box of ui.card.querySelectorAll(".inline-error")) box.hidden = true;
  for (const node of [ui.heading, ui.meta, ui.flags, ui.description]) node.replaceChildren();
  for (const node of [ui.meta, ui.flags]) delete node.dataset.sig;
  ui.edit.open = false;
  credential.reset();
  for (const one of PARTS) one.reset();
}

// -- the header -------------------------------------------------------------------------------------

async function refreshAgent(current) {
  const id = open.id;
  let address;
  try {
    address = path();
  } catch (error) {
    if (still(id, current)) gone(error); // "." or "..": no address can name it, so no agent is open there
    return;
  }
  let agent;
  try {
    agent = await store.api("GET", address);
  } catch (error) {
    if (current() && open.id === id && error instanceof ApiError && error.status === 404) {
      gone(error);
      return;
    }
    throw error;
  }
  if (!still(id, current)) return;
  if (agent.id !== id) {
    open.id = agent.id; // opened by its @handle: the address names it by id
    router.go({ view: "agents", id: agent.id }, { replace: true });
  }
  render(agent);
}

/** The open agent is gone (deleted, unshared) or never was: back to the list, which says so. */
function gone(error) {
  router.go({ view: "agents" }, { replace: true });
  showListError(error, "Opening the agent failed");
}

function render(agent) {
  if (open.agent && agent.share === undefined && open.agent.share) agent = { ...agent, share: open.agent.share };
  open.agent = agent;
  const who = access(agent);
  const ref = who.shared ? agent.share.ref : agent.ref;
  setText(ui.heading, agent.name);
  const facts = [`@${ref}`, `revision ${agent.revision}`, `prompt version ${agent.promptVersion}`];
  if (agent.tools && agent.tools.length) facts.push(`profiles for ${agent.tools.join(", ")}`);
  const last = agent.lastSession;
  const tool = last && last.harness ? ` in ${last.harness}` : "";
  replaceIfChanged(
    ui.meta,
    last ? [`${facts.join(" · ")} · last session `, timeEl(last.at), tool] : [facts.join(" · ")],
    JSON.stringify([facts, last]),
  );
  renderFlags(agent, who);
  setText(ui.description, agent.description || "");
  setText(ui.lock, agent.promptLocked ? "Unlock prompt" : "Lock prompt");
  setText(ui.archive, agent.archived ? "Restore from archive" : "Archive agent");
  setHidden(ui.acceptBox, !who.awaiting);
  if (who.awaiting) {
    setText(
      ui.acceptText,
      `Account ${agent.share.owner} shared this agent with you to ${agent.share.access}` +
        `${agent.share.memory ? ", with its memories" : ""}. Accept it to read it here and load it in your sessions.`,
    );
  }
  for (const node of ui.card.querySelectorAll(".agent-owner")) setHidden(node, !who.owner);
  for (const node of ui.card.querySelectorAll(".agent-write")) setHidden(node, !who.canEdit);
  setHidden(ui.partsBox, who.awaiting);
  credential.render(!agent.archived && (who.owner || (who.shared && !who.awaiting)));
  for (const one of PARTS) if (one.render) one.render(agent);
  if (!ui.edit.open) fillEdit(agent);
}

function renderFlags(agent, who) {
  const flags = [];
  if (who.owner) flags.push(["badge", "Yours"]);
  if (who.shared) {
    flags.push(["badge", `Shared with you to ${agent.share.access}`]);
    if (!who.awaiting) {
      const runs = agent.share.follow ? "follows each new version" : `runs version ${agent.share.acceptedVersion}`;
      flags.push(["meta", ` by account ${agent.share.owner}, ${runs}`]);
    }
  }
  if (agent.promptLocked) flags.push(["badge locked", "Prompt locked"]);
  if (agent.archived) flags.push(["badge", "Archived"]);
  replaceIfChanged(
    ui.flags,
    flags.map(([className, text]) => el("span", { className, text })),
    JSON.stringify(flags),
  );
}

function fillEdit(agent) {
  ui.editName.value = agent.name;
  ui.editDescription.value = agent.description || "";
  ui.editSlug.value = agent.slug;
}

async function saveEdit(event) {
  event.preventDefault();
  const agent = open.agent;
  if (!agent) return;
  const body = {};
  const name = ui.editName.value.trim();
  const description = ui.editDescription.value;
  const slug = ui.editSlug.value.trim();
  if (name !== agent.name) body.name = name;
  if (description !== (agent.description || "")) body.description = description;
  if (access().owner && slug !== agent.slug) body.slug = slug;
  if (!Object.keys(body).length) {
    announce("Nothing to change.");
    return;
  }
  body.expectedRevision = agent.revision;
  const id = open.id;
  await attempt("Saving the agent failed", ui.editForm, event.submitter, async () => {
    const saved = await store.api("PATCH", path(), body);
    if (open.id !== id) return;
    ui.edit.open = false;
    render(saved);
    done(`Saved: ${saved.name} (@${saved.slug}), revision ${saved.revision}.`);
    ui.edit.querySelector("summary").focus();
    kick();
  });
}

function switchAction(which) {
  return async (event) => {
    const agent = open.agent;
    if (!agent) return;
    const on = which === "prompt-lock" ? !agent.promptLocked : !agent.archived;
    const id = open.id;
    const context = which === "prompt-lock" ? "Changing the prompt lock failed" : "Changing the archive failed";
    await attempt(context, ui.switches, event.currentTarget, async () => {
      const changed = await store.api("PUT", path(`/${which}`), { on });
      if (open.id !== id) return;
      render(changed);
      if (which === "prompt-lock") {
        done(on ? "Prompt locked: no one can save a new version until it is unlocked." : "Prompt unlocked.");
      } else {
        done(on ? `${changed.name} archived: it is under Archived now.` : `${changed.name} restored from the archive.`);
      }
      kick();
    });
  };
}

async function deleteAgent() {
  const id = open.id;
  const name = open.agent ? open.agent.name : id;
  await store.api("DELETE", path());
  if (open.id === id) router.go({ view: "agents" }, { replace: true });
  done(`Agent ${name} deleted, with its prompt versions, memories, briefs and shares.`);
  kick();
}

async function accept(event) {
  event.preventDefault();
  const id = open.id;
  await attempt("Accepting the agent failed", ui.acceptForm, event.submitter, async () => {
    const share = await store.api("POST", path("/accept"), { follow: ui.follow.checked });
    if (open.id !== id) return;
    render({ ...open.agent, share });
    done(`Accepted: you run version ${share.acceptedVersion}${share.follow ? " and follow new ones" : ""}.`);
    ui.heading.focus();
    kick();
  });
}

// -- the parts ----------------------------------------------------------------------------------------

function setPart(name) {
  part = name;
  showPart();
  kick();
}

function showPart() {
  for (const button of ui.parts.querySelectorAll("button")) {
    button.setAttribute("aria-pressed", String(button.dataset.part === part));
  }
  for (const [name, section] of sections) section.hidden = name !== part;
}
