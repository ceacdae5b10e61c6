// A credential to run the open agent in a tool: an agent token of one of the account's workspaces, minted here and
// shown once, with how to connect the tool and the instruction that loads the agent. Offered for an agent the
// person can load (their own, or shared and accepted, and not archived).

import * as store from "../../core/store.js";
import { copyFrom, fillSelect, fragment, setText, replaceIfChanged } from "../../core/dom.js";
import { timeEl } from "../../core/format.js";
import { announce, done } from "../../core/feedback.js";
import { attempt, open, path, refs, refuse, setHidden } from "./common.js";

const MARKUP = `
<section class="sub agent-credential" aria-labelledby="agent-credential-h" data-ref="box" hidden>
  <h3 id="agent-credential-h" tabindex="-1" data-ref="heading">Credential</h3>
  <p class="hint">An agent token of one of your workspaces, to run this agent in a tool.</p>
  <form class="agent-fields" novalidate aria-labelledby="agent-credential-h" data-ref="form">
    <div class="field grow">
      <label for="agent-credential-workspace">Workspace for the token</label>
      <select id="agent-credential-workspace" data-ref="workspace"></select>
    </div>
    <div class="field">
      <label for="agent-credential-tool">Tool to run it in</label>
      <select id="agent-credential-tool" data-ref="tool">
        <option value="claude-code">Claude Code</option>
        <option value="codex">Codex</option>
        <option value="cursor">Cursor</option>
        <option value="claude-ai">Claude.ai</option>
        <option value="copilot">GitHub Copilot</option>
        <option value="gemini-cli">Gemini CLI</option>
        <option value="windsurf">Windsurf</option>
        <option value="zed">Zed</option>
        <option value="other">Another tool</option>
      </select>
    </div>
    <div class="field buttons">
      <button type="submit">Mint credential</button>
    </div>
  </form>
  <p class="meta" data-ref="none" hidden>The account has no workspace yet: create one first.</p>

  <section class="created" aria-labelledby="agent-credential-minted-h" data-ref="minted" hidden>
    <h4 id="agent-credential-minted-h" tabindex="-1" data-ref="mintedHeading"></h4>
    <p class="meta" data-ref="mintedMeta"></p>
    <p class="warn">Shown once: store it now; revoke it under the workspace's tokens.</p>
    <label for="agent-credential-token">Credential token</label>
    <div class="copy-row">
      <input id="agent-credential-token" type="text" readonly spellcheck="false" autocomplete="off" data-ref="token">
      <button type="button" data-ref="copy">Copy credential token</button>
    </div>
    <h5>Connect the tool</h5>
    <pre class="doc" id="agent-credential-connect" data-ref="connect"></pre>
    <h5>Load the agent</h5>
    <pre class="doc" id="agent-credential-load" data-ref="load"></pre>
    <button type="button" class="secondary" data-ref="stored">I have stored it</button>
  </section>
</section>`;

let ui = null;

export function build() {
  const box = fragment(MARKUP).firstElementChild;
  ui = refs(box);
  ui.form.addEventListener("submit", mint);
  ui.copy.addEventListener("click", async () => announce(await copyFrom(ui.token, "The credential token")));
  ui.stored.addEventListener("click", () => {
    hide();
    announce("The credential token is no longer shown.");
    ui.heading.focus();
  });
  return box;
}

/** Shown for an agent the person can load; the workspaces kept in step with the console's. */
export function render(loadable) {
  setHidden(ui.box, !loadable);
  if (loadable) listWorkspaces();
}

/** Another agent opens, or none: the minted token leaves the page, the workspace is chosen afresh. */
export function reset() {
  hide();
  ui.form.reset();
  ui.workspace.replaceChildren();
  setHidden(ui.box, true);
}

/** The account's workspaces (the shell keeps them current each round); the one the console is in is picked first. */
function listWorkspaces() {
  const select = ui.workspace;
  const fresh = select.options.length === 0;
  const workspaces = store.get("workspaces") || [];
  fillSelect(select, workspaces.map((w) => [w.id, w.title]));
  const chosen = store.get("workspaceId");
  if (fresh && workspaces.some((w) => w.id === chosen)) select.value = chosen;
  setHidden(ui.none, workspaces.length > 0);
}

async function mint(event) {
  event.preventDefault();
  const workspace = ui.workspace.value;
  if (!workspace) {
    refuse("the account has no workspace yet: create one first", "Minting the credential", ui.form, ui.workspace);
    return;
  }
  const title = ui.workspace.selectedOptions[0].textContent;
  const tool = ui.tool.selectedOptions[0].textContent;
  const id = open.id;
  await attempt("Minting the credential failed", ui.form, event.submitter, async () => {
    const minted = await store.api("POST", path("/credentials"), { workspace, harness: ui.tool.value });
    if (open.id !== id) return;
    setText(ui.mintedHeading, `Credential for ${tool} in ${title}`);
    replaceIfChanged(ui.mintedMeta, [`token ${minted.tokenId} · minted `, timeEl(minted.createdAt)], minted.tokenId);
    ui.token.value = minted.agentToken;
    setText(ui.connect, minted.connect);
    setText(ui.load, minted.load);
    setHidden(ui.minted, false);
    done(`Credential minted in ${title}. Store its token now: it is shown once.`);
    ui.mintedHeading.focus();
  });
}

/** The minted token leaves the page: stored, or another agent opened. */
function hide() {
  ui.token.value = "";
  for (const node of [ui.mintedHeading, ui.mintedMeta, ui.connect, ui.load]) node.replaceChildren();
  delete ui.mintedMeta.dataset.sig;
  setHidden(ui.minted, true);
}
