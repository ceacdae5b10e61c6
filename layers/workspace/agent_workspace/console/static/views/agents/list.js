// The Agents view's list: the account's agents by tab (mine, shared with me, archived), the transfers other
// accounts offer to this one, and the form that creates an agent. Opening one is a route (`#/agents/<id>`), so
// Back returns to the list and a link reopens it.

import * as store from "../../core/store.js";
import * as router from "../../core/router.js";
import { seg } from "../../core/api.js";
import { el, fragment, reconcile, setText, setAttr } from "../../core/dom.js";
import { plural, timeEl } from "../../core/format.js";
import { done, showError } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";
import { attempt, open, refs, refuse, setHidden } from "./common.js";

const TAB_EMPTY = {
  mine: "You have no agents yet: create one below.",
  shared: "No agent is shared with this account.",
  archived: "No archived agents.",
};

const MARKUP = `
<section class="card agents-list-card" aria-labelledby="agents-h" data-ref="card">
  <h1 id="agents-h" tabindex="-1" data-ref="heading">Agents</h1>
  <p class="hint">The account's agents: their prompt, profiles, briefs and memories, loaded in any workspace.</p>
  <div role="group" aria-label="Which agents" class="chips agents-tabs" data-ref="tabs">
    <button type="button" class="chip" data-tab="mine" aria-pressed="true">Mine</button>
    <button type="button" class="chip" data-tab="shared" aria-pressed="false">Shared with me</button>
    <button type="button" class="chip" data-tab="archived" aria-pressed="false">Archived</button>
  </div>
  <section class="sub" aria-labelledby="agents-offers-h" data-ref="offers" hidden>
    <h2 id="agents-offers-h">Offered to you</h2>
    <p class="hint">Another account offers to transfer these agents to yours. Accepting makes one yours: every
      share its owner made and every open session of it end. Until then you see nothing of it.</p>
    <ul class="list" aria-label="Agents offered to you" data-ref="offersList"></ul>
  </section>
  <p class="empty" data-ref="empty" hidden></p>
  <ul class="list agents-list" aria-label="Agents" data-ref="list"></ul>
  <details class="sub" data-ref="create">
    <summary>New agent</summary>
    <form novalidate data-ref="form">
      <label for="agent-new-name">Agent name</label>
      <input id="agent-new-name" type="text" maxlength="200" autocomplete="off" data-ref="name">
      <label for="agent-new-prompt">Its first prompt</label>
      <textarea id="agent-new-prompt" rows="6" class="mono" spellcheck="false" data-ref="prompt"></textarea>
      <button type="submit">Create agent</button>
    </form>
  </details>
</section>`;

let ui = null; // this module's elements (data-ref)
let tab = "mine";
const listed = new Map(); // id → the agent as the current tab lists it

/** The list's card, built once. */
export function build() {
  const card = fragment(MARKUP).firstElementChild;
  ui = refs(card);
  for (const button of ui.tabs.querySelectorAll("button")) {
    button.addEventListener("click", () => setTab(button.dataset.tab));
  }
  ui.form.addEventListener("submit", createAgent);
  return card;
}

/** The agent's name as the list last showed it (the detail's heading until the agent itself is read). */
export const listedName = (id) => (listed.has(id) ? listed.get(id).name : null);

/** An error that concerns the list (an agent that could not be opened): in the list's card. */
export function showListError(error, context) {
  showError(error, context, ui.card);
}

/** Mark the open agent in the list (aria-current), and put focus back on it when it closes. */
export function markOpen(id, { focusClosed = null } = {}) {
  for (const li of ui.list.children) setAttr(li.querySelector(".agent-open"), "aria-current", li.dataset.key === id);
  if (focusClosed === null) return;
  const back = Array.from(ui.list.children).find((li) => li.dataset.key === focusClosed);
  if (back) back.querySelector(".agent-open").focus();
  else ui.heading.focus();
}

/** One round's share: the tab's agents and the offers, reconciled by id. */
export async function refresh(current) {
  await Promise.all([refreshList(current), refreshOffers(current)]);
}

export function reset() {
  tab = "mine";
  listed.clear();
  markTabs();
  ui.list.replaceChildren();
  setHidden(ui.empty, true);
  ui.offersList.replaceChildren();
  setHidden(ui.offers, true);
  ui.form.reset();
  ui.create.open = false;
}

// -- the tab's agents ------------------------------------------------------------------------------

async function refreshList(current) {
  const asked = tab;
  const data = await store.api("GET", `/api/agents?view=${seg(asked)}`);
  if (!current() || asked !== tab) return;
  const agents = data.agents || [];
  listed.clear();
  for (const agent of agents) listed.set(agent.id, agent);
  reconcile(ui.list, agents, (agent) => agent.id, agentItem, updateAgentItem);
  setText(ui.empty, TAB_EMPTY[asked]);
  setHidden(ui.empty, agents.length > 0);
}

function agentItem(agent) {
  const li = el("li", { className: "agent-item" });
  const link = el("a", { className: "agent-open", href: router.href({ view: "agents", id: agent.id }) });
  li.append(link, el("p", { className: "meta" }), el("p", { className: "agent-desc" }));
  updateAgentItem(li, agent);
  return li;
}

function updateAgentItem(li, agent) {
  const link = li.querySelector(".agent-open");
  setText(link, agent.name);
  setAttr(link, "aria-current", agent.id === open.id);
  const remembered = Object.values(agent.memories || {}).reduce((sum, n) => sum + n, 0);
  const facts = [`@${agent.ref}`, `prompt v${agent.promptVersion}`, plural(remembered, "memory", "memories")];
  if (agent.tools && agent.tools.length) facts.push(agent.tools.join(", "));
  if (agent.role === "shared") facts.push(`shared to ${agent.access}`);
  const meta = li.querySelector(".meta");
  const signature = JSON.stringify([facts, agent.awaitingAccept, agent.promptLocked]);
  if (meta.dataset.sig !== signature) {
    meta.dataset.sig = signature;
    meta.replaceChildren(
      facts.join(" · "),
      agent.awaitingAccept ? el("span", { className: "badge ask", text: "Waiting for you to accept" }) : "",
      agent.promptLocked ? el("span", { className: "badge", text: "Prompt locked" }) : "",
    );
  }
  setText(li.querySelector(".agent-desc"), agent.description || "");
}

function setTab(next) {
  tab = next;
  markTabs();
  ui.list.replaceChildren();
  setHidden(ui.empty, true);
  kick();
}

function markTabs() {
  for (const button of ui.tabs.querySelectorAll("button")) {
    button.setAttribute("aria-pressed", String(button.dataset.tab === tab));
  }
}

async function createAgent(event) {
  event.preventDefault();
  const name = ui.name.value.trim();
  if (!name) {
    refuse("give the agent a name", "Creating the agent", ui.form, ui.name);
    return;
  }
  const body = { name };
  if (ui.prompt.value.trim()) body.prompt = ui.prompt.value;
  await attempt("Creating the agent failed", ui.form, event.submitter, async () => {
    const made = await store.api("POST", "/api/agents", body);
    ui.form.reset();
    ui.create.open = false;
    if (tab !== "mine") setTab("mine");
    done(`Agent ${made.name} created as @${made.slug}.`);
    router.go({ view: "agents", id: made.id });
  });
}

// -- transfers offered to this account --------------------------------------------------------------

async function refreshOffers(current) {
  const data = await store.api("GET", "/api/agents/transfer-offers");
  if (!current()) return;
  const offers = data.offers || [];
  reconcile(ui.offersList, offers, (offer) => offer.agent, offerItem, updateOfferItem);
  setHidden(ui.offers, offers.length === 0);
}

function offerItem(offer) {
  const li = el("li", { className: "agent-item" });
  const take = el("button", { type: "button", className: "offer-accept", text: "Accept transfer" });
  const refuseIt = el("button", { type: "button", className: "secondary offer-decline", text: "Decline" });
  take.addEventListener("click", () => decideOffer(li, "accept", take));
  refuseIt.addEventListener("click", () => decideOffer(li, "decline", refuseIt));
  li.append(el("p", { className: "agent-offer-name" }), el("p", { className: "meta" }));
  li.append(el("div", { className: "actions" }, take, refuseIt));
  updateOfferItem(li, offer);
  return li;
}

function updateOfferItem(li, offer) {
  li.dataset.name = offer.name;
  setText(li.querySelector(".agent-offer-name"), offer.name);
  const meta = li.querySelector(".meta");
  const signature = `${offer.slug} ${offer.owner} ${offer.offeredAt}`;
  if (meta.dataset.sig !== signature) {
    meta.dataset.sig = signature;
    meta.replaceChildren(`@${offer.slug} from account ${offer.owner}, offered `, timeEl(offer.offeredAt));
  }
  setAttr(li.querySelector(".offer-accept"), "aria-label", `Accept transfer of ${offer.name}`);
  setAttr(li.querySelector(".offer-decline"), "aria-label", `Decline transfer of ${offer.name}`);
}

async function decideOffer(li, decision, button) {
  const id = li.dataset.key;
  const name = li.dataset.name;
  const context = decision === "accept" ? "Accepting the transfer failed" : "Declining the transfer failed";
  await attempt(context, li, button, async () => {
    await store.api("POST", `/api/agents/${seg(id)}/transfer/${decision}`);
    li.remove();
    setHidden(ui.offers, ui.offersList.children.length === 0);
    done(
      decision === "accept"
        ? `${name} is yours now: its earlier shares and sessions have ended.`
        : `Declined the transfer of ${name}.`,
    );
    if (ui.offers.hidden) ui.heading.focus();
    else ui.offersList.querySelector("button").focus();
    kick();
  });
}
