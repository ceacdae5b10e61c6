// Settings › Connect an agent: the MCP URLs an agent connects to, and the workspace's agent tokens (listed with
// their date, minted, revoked). A token is shown once, in the answer that mints it (only its hash is stored), so
// the box that shows it is built for that answer and removed when the human is done or leaves the page.
//
// Tokens change rarely: they are read in full rounds only (every third timer round, or at once after a click).

import * as store from "../../core/store.js";
import { kick } from "../../core/refresh.js";
import { seg } from "../../core/api.js";
import { el, fragment, reconcile, copyFrom, nextId, setText } from "../../core/dom.js";
import { json, timeEl } from "../../core/format.js";
import { announce, clearError, showError } from "../../core/feedback.js";
import { askFirst } from "../../core/confirm.js";
import { revocable } from "./common.js";

// Each reference's tools on a path of its own (mcp_server/surfaces.py), all with the same tokens and sign-in.
const MCP_PATHS = [
  ["/mcp", "the nine action tools (task, memory, skills, workspace, siteTools, pano, board, agent, help)"],
  ["/mcp/agentrq", "AgentRQ's seven tools"],
  ["/mcp/masaro", "Masaro's 19 task-board tools, by their names"],
  ["/mcp/omr", "On My Radar's 21 Agent Repo tools, by their names"],
];

const MARKUP = `
  <p class="hint">An agent (Claude Code, Cursor, any MCP client) connects to one of these URLs with an agent token
    of this workspace, or signs in (the app asks for it, and shows under Connected apps).</p>
  <dl class="mcp-urls"></dl>
  <h3 class="tokens-h">Agent tokens</h3>
  <button type="button" class="secondary tokens-mint">Mint an agent token</button>
  <p class="empty tokens-empty" hidden>No agent token: mint one to connect an agent.</p>
  <ul class="list tokens-list"></ul>`;

let root = null;
let list = null;
let minted = null; // the box showing a token just minted, until "Done"
let tokens = null; // the list's items, less those revoked from this page (common.js)

/** The .mcp.json that connects Claude Code (and most MCP clients) to this server with `token`. */
export function mcpSnippet(token) {
  return json({
    mcpServers: {
      "agent-workspace": {
        type: "http",
        url: `${window.location.origin}/mcp`,
        headers: { Authorization: `Bearer ${token}` },
      },
    },
  });
}

/**
 * A box showing an agent token once, with its .mcp.json and copy buttons. `label` and `snippetLabel` name the
 * two fields (two such boxes never share a label). "Done" removes it (the token leaves the page), then `onDone`.
 */
export function oneTimeToken({ heading, label, snippetLabel, token, onDone }) {
  const headingId = nextId("once-h");
  const tokenId = nextId("once-token");
  const snippetId = nextId("once-snippet");
  const field = el("input", { id: tokenId, className: "mono", type: "text", readOnly: true, spellcheck: false });
  const snippet = el("textarea", { id: snippetId, className: "mono", readOnly: true, rows: 11, spellcheck: false });
  field.value = token;
  snippet.value = mcpSnippet(token);
  const copyToken = el("button", { type: "button", text: `Copy ${label.toLowerCase()}` });
  const copySnippet = el("button", { type: "button", text: `Copy ${snippetLabel}` });
  const finish = el("button", { type: "button", className: "secondary", text: "Done, I have saved it" });
  const box = el(
    "section",
    { className: "created" },
    el("h3", { id: headingId, tabindex: "-1", text: heading }),
    el("p", { className: "warn", text: "Shown once: copy it now. Only its hash is stored." }),
    el("label", { htmlFor: tokenId, text: label }),
    el("div", { className: "copy-row" }, field, copyToken),
    el("label", { htmlFor: snippetId, text: snippetLabel }),
    snippet,
    el("div", { className: "actions" }, copySnippet, finish),
  );
  box.setAttribute("aria-labelledby", headingId);
  const what = label.charAt(0).toLowerCase() + label.slice(1);
  copyToken.addEventListener("click", async () => announce(await copyFrom(field, `The ${what}`)));
  copySnippet.addEventListener("click", async () => announce(await copyFrom(snippet, "The .mcp.json snippet")));
  finish.addEventListener("click", () => {
    forget(box);
    announce("The agent token is no longer shown.");
    if (onDone) onDone();
  });
  return box;
}

/** Take a token box off the page, its fields emptied first (nothing keeps the secret). */
export function forget(box) {
  if (!box) return;
  for (const field of box.querySelectorAll("input, textarea")) field.value = "";
  box.remove();
}

function tokenItem(token) {
  const li = el("li", { className: "token" });
  const name = `Agent token ·${String(token.id).slice(-4)}`;
  const revoke = el("button", { type: "button", className: "secondary small", text: "Revoke" });
  revoke.setAttribute("aria-label", `Revoke ${name}`);
  revoke.addEventListener("click", () => ask(token, name, li, revoke));
  li.append(
    el("strong", { text: name }),
    el("p", { className: "meta" }, "id ", el("code", { text: token.id }), " · minted ", timeEl(token.createdAt)),
    el("div", { className: "actions" }, revoke),
  );
  return li;
}

/** The question in the page, under the button: revoke, or keep the token. */
function ask(token, name, li, button) {
  askFirst(button, {
    under: button.parentElement,
    question: `Revoke ${name}? An agent using it is refused from its next call.`,
    yes: "Revoke token",
    act: (sure) =>
      tokens.revoke(token.id, li, sure, {
        call: () => store.api("DELETE", store.ws(`/tokens/${seg(token.id)}`)),
        said: `${name} is revoked.`,
        failed: `Revoking ${name} failed`,
      }),
  });
}

async function mint(button) {
  // The workspace of the click: a token is its workspace's, and shown once, so never under another one.
  const workspaceId = store.get("workspaceId");
  const title = (store.workspace() || {}).title || workspaceId;
  button.disabled = true;
  try {
    const token = await store.api("POST", store.ws("/tokens"));
    if (store.get("workspaceId") !== workspaceId) {
      const name = `Agent token ·${String(token.id).slice(-4)}`;
      const reason = `${name} was minted in “${title}”, but another workspace was chosen before it arrived, so it is ` +
        `not shown: revoke it in the Settings of “${title}” and mint a new one there`;
      showError(new Error(reason), "Minting an agent token", root);
      return;
    }
    forget(minted);
    minted = oneTimeToken({
      heading: `The new agent token for “${title}”`,
      label: "New agent token",
      snippetLabel: ".mcp.json for the new token",
      token: token.agentToken,
      onDone: () => {
        minted = null;
        button.focus();
      },
    });
    button.after(minted); // above the list: the list growing by the new token does not push it away
    clearError(root);
    announce(`An agent token is minted for “${title}”. Copy it now: it is shown once.`);
    minted.querySelector("h3").focus({ preventScroll: true });
    minted.scrollIntoView({ block: "nearest" });
    kick();
  } catch (error) {
    showError(error, "Minting an agent token failed", root);
  } finally {
    button.disabled = false;
  }
}

export const tokensSection = {
  id: "connect",
  title: "Connect an agent",
  workspace: true,
  mount(box) {
    root = box;
    box.append(fragment(MARKUP));
    list = box.querySelector(".tokens-list");
    const headingId = nextId("tokens-h");
    box.querySelector(".tokens-h").id = headingId;
    list.setAttribute("aria-labelledby", headingId);
    tokens = revocable(box, list, box.querySelector(".tokens-empty"));
    box.querySelector(".mcp-urls").append(
      ...MCP_PATHS.flatMap(([path, what]) => [
        el("dt", {}, el("code", { text: `${window.location.origin}${path}` })),
        el("dd", { text: what }),
      ]),
    );
    const button = box.querySelector(".tokens-mint");
    button.addEventListener("click", () => mint(button));
  },
  async refresh(current, full) {
    if (!full) return;
    const listed = await store.api("GET", store.ws("/tokens"));
    if (!current()) return;
    const shown = tokens.kept(Array.isArray(listed) ? listed : []);
    reconcile(list, shown, (t) => t.id, tokenItem);
    root.querySelector(".tokens-empty").hidden = shown.length > 0;
    setText(root.querySelector(".tokens-h"), `Agent tokens (${shown.length})`);
  },
  leave() {
    forget(minted);
    minted = null;
  },
  switched() {
    this.reset();
  },
  reset() {
    forget(minted);
    minted = null;
    tokens.reset();
    setText(root.querySelector(".tokens-h"), "Agent tokens");
  },
};
