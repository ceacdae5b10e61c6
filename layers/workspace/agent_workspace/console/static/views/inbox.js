// The Inbox (`#/inbox`): everything that waits on the human, as one list, each item decided in place with the
// answer component (views/answer.js). Most urgent first: Claude Code's tool approvals and agents' questions
// hold an agent right now, then blockers, site-tool calls, proposals to triage and deliveries to review;
// within a kind, the oldest first. Filter chips narrow it by kind.
//
// The list is core/needs.js's `needs`, which the shell reads each round: the view listens to the store (even
// off screen, so it announces what is new and is current when shown) and reconciles by `${kind}:${id}`, so a
// half-filled answer survives the refreshes; a filter hides items rather than dropping them, for the same
// reason. Under the list: the tool approvals answered last and the tools always allowed (views/inbox/permissions.js).

import * as store from "../core/store.js";
import { el, fragment, reconcile, setAttr, setText } from "../core/dom.js";
import { announce } from "../core/feedback.js";
import { plural } from "../core/format.js";
import { kick } from "../core/refresh.js";
import { bind } from "../core/shortcuts.js";
import { answerFor, updateAnswer } from "./answer.js";
import * as toolApprovals from "./inbox/permissions.js";

const KINDS = [
  ["permissions", "Approvals"],
  ["questions", "Questions"],
  ["blockers", "Blockers"],
  ["siteCalls", "Site calls"],
  ["triage", "Triage"],
  ["reviews", "Reviews"],
];
const KIND_LABELS = Object.fromEntries(KINDS);

// What a screen reader hears when one new item arrives (several: how many).
const NEWS = {
  permissions: (p) => `Claude Code asks to use ${p.toolName}: ${p.description}`,
  questions: (q) => `New question from the agent: ${q.message}`,
  blockers: (t) => `${t.identifier || ""} ${t.title} is blocked: the agent asks you ${plural((t.questions || []).length,
    "question")}.`.trim(),
  siteCalls: (c) => `The agent wants to run ${c.tool} on ${c.site}.`,
  triage: (t) => `${t.identifier || ""} ${t.title} was proposed: accept or decline it.`.trim(),
  reviews: (t) => `${t.identifier || ""} ${t.title} was delivered: approve it or send it back.`.trim(),
};

const MARKUP = `
  <header class="inbox-head">
    <h1 tabindex="-1">Inbox</h1>
    <p class="hint">What agents wait on you for, most urgent first. Decide each one here.</p>
  </header>
  <div class="chips inbox-filters" role="group" aria-label="Show"></div>
  <p class="inbox-empty empty"></p>
  <ol class="inbox-list" aria-label="Waiting on you"></ol>`;

const ui = {}; // the view's nodes
let filter = "all";
let seen = null; // the keys listed at the last read; null before the first (nothing counts as new then)
let generation = 0; // bumped by reset: a title lookup started before it is stale
let lastFocus = null; // {key, index} of the item last holding focus, where focus goes when it leaves

export const inbox = {
  name: "inbox",
  label: "Inbox",
  icon: "✉",
  account: false,
  mount(root) {
    ui.root = root;
    root.append(fragment(MARKUP));
    ui.heading = root.querySelector("h1");
    ui.chips = root.querySelector(".inbox-filters");
    ui.empty = root.querySelector(".inbox-empty");
    ui.list = root.querySelector(".inbox-list");
    buildChips();
    toolApprovals.mount(root);
    ui.list.addEventListener("focusin", (event) => {
      const li = event.target.closest(".inbox-item");
      if (li) lastFocus = { key: li.dataset.key, index: visibleItems().indexOf(li) };
    });
    ui.list.addEventListener("focusout", (event) => {
      // Focus moved elsewhere on purpose: nothing to put back. (A removed item takes focus away with no target.)
      if (event.relatedTarget && !ui.list.contains(event.relatedTarget)) lastFocus = null;
    });
    store.on("needs", render);
    store.on("workspaceId", () => render(store.get("needs")));
    const onScreen = () => !ui.root.hidden;
    bind("j", "Inbox: the next item", () => move(1), onScreen);
    bind("k", "Inbox: the previous item", () => move(-1), onScreen);
    bind("a", "Inbox: answer the item in focus (its first field or button)", answerFocused, onScreen);
    render(store.get("needs"));
  },
  enter() {
    render(store.get("needs"));
  },
  leave() {},
  hears: (change) => change.what === "needs", // the list follows core/needs.js; here, the approvals answered last
  async refresh(current, full) {
    await toolApprovals.refresh(current, full);
  },
  reset() {
    generation += 1;
    seen = null;
    lastFocus = null;
    filter = "all";
    ui.list.replaceChildren();
    toolApprovals.reset();
    render(store.get("needs"));
  },
};

// -- the filter chips ------------------------------------------------------------------------------

function buildChips() {
  for (const [kind, label] of [["all", "All"], ...KINDS]) {
    const chip = el("button", { type: "button", className: "chip" }, label, " ", el("span", { className: "count" }));
    chip.dataset.kind = kind;
    chip.setAttribute("aria-pressed", String(kind === filter));
    chip.addEventListener("click", () => {
      filter = kind;
      render(store.get("needs"));
      kick();
    });
    ui.chips.append(chip);
  }
}

// -- the list --------------------------------------------------------------------------------------

/** When an item started waiting, to put the oldest of a kind first. */
function since(kind, item) {
  if (kind === "blockers") return String(item.updatedAt || "");
  if (kind === "reviews") return String((item.delivery && item.delivery.at) || item.updatedAt || "");
  return String(item.createdAt || "");
}

function entries(needs) {
  const out = [];
  if (!needs) return out;
  for (const [kind] of KINDS) {
    const items = [...(Array.isArray(needs[kind]) ? needs[kind] : [])];
    items.sort((a, b) => since(kind, a).localeCompare(since(kind, b)));
    for (const item of items) out.push({ kind, item, key: `${kind}:${item.id}` });
  }
  return out;
}

function createItem(entry) {
  const li = el("li", { className: "inbox-item" });
  li.dataset.kind = entry.kind;
  li.append(answerFor(entry.kind, entry.item, { headingLevel: 2 }));
  return li;
}

function updateItem(li, entry) {
  updateAnswer(li.firstElementChild, entry.item);
}

const visibleItems = () => Array.from(ui.list.children).filter((li) => !li.hidden);

function render(needs) {
  if (!ui.list) return;
  const all = entries(needs);
  reconcile(ui.list, all, (e) => e.key, createItem, updateItem);
  for (const li of ui.list.children) li.hidden = filter !== "all" && li.dataset.kind !== filter;
  showCounts(needs, all);
  keepFocus();
  announceNews(needs, all);
  learnTaskTitles(all);
}

function showCounts(needs, all) {
  const counts = { all: all.length };
  for (const [kind] of KINDS) counts[kind] = all.filter((e) => e.kind === kind).length;
  for (const chip of ui.chips.children) {
    const kind = chip.dataset.kind;
    setText(chip.querySelector(".count"), counts[kind] ? String(counts[kind]) : "");
    setAttr(chip, "aria-pressed", String(kind === filter));
  }
  const shown = filter === "all" ? all.length : counts[filter];
  const text = !needs
    ? store.get("workspaceId") ? "Reading what needs you…" : "No workspace yet: create one in Settings."
    : all.length === 0
      ? "Nothing needs you."
      : shown === 0
        ? `Nothing needs you in ${KIND_LABELS[filter].toLowerCase()}; ${plural(all.length, "other item")} ` +
          "wait in All."
        : "";
  setText(ui.empty, text);
  ui.empty.hidden = text === "";
}

/** A decided item leaves the list: keyboard focus goes to the one that took its place, or to the heading. */
function keepFocus() {
  if (!lastFocus || ui.root.hidden) return;
  const active = document.activeElement;
  if (active && active !== document.body && document.contains(active)) return;
  const items = visibleItems();
  if (items.some((li) => li.dataset.key === lastFocus.key)) return;
  const next = items[Math.min(lastFocus.index, items.length - 1)];
  lastFocus = null;
  focusCard(next ? next.firstElementChild : ui.heading);
}

function announceNews(needs, all) {
  if (!needs) return;
  const keys = new Set(all.map((e) => e.key));
  const fresh = seen ? all.filter((e) => !seen.has(e.key)) : [];
  seen = keys;
  if (fresh.length === 1) announce(NEWS[fresh[0].kind](fresh[0].item));
  else if (fresh.length > 1) announce(`${fresh.length} new items need you.`);
}

/** Questions, site calls and tool approvals name their task by id only: learn its title, then show it. */
function learnTaskTitles(all) {
  const ids = all.filter((e) => e.item.taskId).map((e) => e.item.taskId);
  const unknown = ids.filter((id) => !store.taskIdentifier(id));
  if (!unknown.length) return;
  const mine = generation;
  store.learnTitles(unknown, () => mine === generation).then(() => {
    if (mine !== generation) return;
    for (const li of ui.list.children) {
      const entry = all.find((e) => e.key === li.dataset.key);
      if (entry) updateItem(li, entry);
    }
  });
}

// -- the keyboard: j / k move between items, a answers the one in focus --------------------------------

function focusCard(node) {
  if (!node) return;
  if (!node.hasAttribute("tabindex")) node.setAttribute("tabindex", "-1");
  node.focus();
  node.scrollIntoView({ block: "nearest" });
}

function currentItem() {
  return visibleItems().find((li) => li.contains(document.activeElement)) || null;
}

function move(step) {
  const items = visibleItems();
  if (!items.length) return;
  const at = items.indexOf(currentItem());
  const index = at < 0 ? (step > 0 ? 0 : items.length - 1) : Math.max(0, Math.min(items.length - 1, at + step));
  focusCard(items[index].firstElementChild);
}

function answerFocused() {
  const li = currentItem() || visibleItems()[0];
  if (!li) return;
  const target = li.querySelector("input:not([type=hidden]), select, textarea, .answer-card > :not(header) button");
  if (target) {
    target.focus();
    target.scrollIntoView({ block: "nearest" });
  }
}
