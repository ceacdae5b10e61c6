// Settings › Workspace: the workspace chosen in the top bar (title, mission, id) and the form that makes a new
// one. A new workspace comes with its first agent token, shown once (only its hash is stored) beside the
// .mcp.json that connects an agent, and becomes the workspace chosen in the top bar.
//
// Without a workspace this is the one thing the page offers first: the form is open.

import * as store from "../../core/store.js";
import { setWorkspaces, selectWorkspace } from "../../shell.js";
import { fragment, setText } from "../../core/dom.js";
import { announce, clearError, showError } from "../../core/feedback.js";
import { forget, oneTimeToken } from "./tokens.js";

// No label here may contain "permission": a label matches by substring, and "Mission" is this form's.
const MARKUP = `
  <p class="ws-none" hidden>This account has no workspace yet: create one below.</p>
  <div class="ws-info">
    <p class="ws-title"></p>
    <p class="ws-mission"></p>
    <p class="meta">id <code class="ws-id"></code></p>
  </div>
  <details class="sub ws-new">
    <summary>New workspace</summary>
    <form class="ws-form" novalidate>
      <label for="ws-title">Workspace title</label>
      <input id="ws-title" name="title" type="text" maxlength="200" autocomplete="off">
      <label for="ws-mission">Mission</label>
      <textarea id="ws-mission" name="mission" rows="3"></textarea>
      <button type="submit">Create workspace</button>
    </form>
  </details>`;

let root = null;
let created = null; // the new workspace's token box, until "Done", another workspace or another view
let hadNone = false; // the account had no workspace at the last look: the form opened once, then it is theirs

function show() {
  const workspace = store.workspace();
  const none = Boolean(store.get("token")) && store.get("workspaces").length === 0; // signed in, with none
  root.querySelector(".ws-none").hidden = !none;
  root.querySelector(".ws-info").hidden = !workspace;
  setText(root.querySelector(".ws-title"), workspace ? workspace.title : "");
  setText(root.querySelector(".ws-mission"), workspace ? workspace.mission || "No mission set." : "");
  setText(root.querySelector(".ws-id"), workspace ? workspace.id : "");
  if (none && !hadNone) root.querySelector(".ws-new").open = true;
  hadNone = none;
}

function hideCreated() {
  forget(created);
  created = null;
}

async function create(event) {
  event.preventDefault();
  const form = event.target;
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const made = await store.api("POST", "/api/workspaces", {
      title: form.elements.title.value,
      mission: form.elements.mission.value,
    });
    const { agentToken, tokenId, ...workspace } = made;
    form.reset();
    root.querySelector(".ws-new").open = false;
    clearError(form);
    setWorkspaces([...store.get("workspaces").filter((w) => w.id !== workspace.id), workspace]);
    selectWorkspace(workspace.id); // every view forgets the old workspace: this box comes after
    hideCreated();
    created = oneTimeToken({
      heading: `Connect an agent to ${workspace.title}`,
      label: "Agent token",
      snippetLabel: ".mcp.json",
      token: agentToken,
      onDone: () => {
        created = null;
        root.querySelector("h2").focus();
      },
    });
    root.querySelector(".ws-info").after(created);
    show();
    created.querySelector("h3").focus();
    announce(`Workspace ${workspace.title} created. Copy its agent token now: it is shown once.`);
  } catch (error) {
    showError(error, "Creating the workspace failed", form);
  } finally {
    button.disabled = false;
  }
}

export const workspaceSection = {
  id: "workspace",
  title: "Workspace",
  workspace: false, // without one, its form is what the page offers first
  mount(box) {
    root = box;
    box.append(fragment(MARKUP));
    box.querySelector(".ws-form").addEventListener("submit", create);
    store.on("workspaces", show);
    show();
  },
  enter() {
    show();
  },
  leave() {
    hideCreated(); // shown once: leaving the page is leaving it
  },
  switched() {
    hideCreated();
    show();
  },
  reset() {
    hideCreated();
    root.querySelector(".ws-form").reset();
    clearError(root.querySelector(".ws-form"));
    root.querySelector(".ws-new").open = false;
    hadNone = false; // the next account's first listing decides (signing out emptied the store's)
  },
};
