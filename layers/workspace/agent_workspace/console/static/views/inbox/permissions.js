// Claude Code's tool permissions (issue 19), what the inbox shows under its list: the requests answered last
// (or expired) and the tools always allowed in this workspace, each rule with a Revoke button. The requests
// still waiting are in the inbox's list itself, decided with the answer component (views/answer.js).
//
// The requests come from the store (`permissions`: core/needs.js reads …/permissions every round for the
// inbox's count, every status), so they are not read twice; only the rules are read here.
//
// A request blocks Claude Code until it is answered and expires after 10 minutes; an always-allowed tool is
// answered by the server at once, until the rule is revoked here.

import * as store from "../../core/store.js";
import { ApiError, seg } from "../../core/api.js";
import { el, fragment, nextId, reconcile } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { timeEl } from "../../core/format.js";
import { kick } from "../../core/refresh.js";

const RECENT = 5; // answered or expired requests shown
const STATUS_NAMES = { allowed: "Allowed", denied: "Denied", expired: "Expired", pending: "Pending" };

const ui = {}; // the section's nodes, once mounted
let read = false; // whether the rules were read since the last reset

function markup(headingId) {
  return fragment(`
    <h2 id="${headingId}">Tool approvals: recent and always allowed</h2>
    <p class="hint">Claude Code asks before it uses a tool; its requests wait in the list above.</p>
    <h3>Recently answered</h3>
    <ul class="list permissions-recent" aria-label="Recently answered"></ul>
    <p class="empty permissions-recent-empty">No request answered yet.</p>
    <h3>Always allowed here</h3>
    <ul class="list permission-rules" aria-label="Always allowed here"></ul>
    <p class="empty permission-rules-empty">No tool is always allowed here: Claude Code asks each time.</p>`);
}

/** Build the section into `container` (the inbox's view). */
export function mount(container) {
  const headingId = nextId("tool-approvals");
  const section = el("section", { className: "card tool-approvals" });
  section.setAttribute("aria-labelledby", headingId);
  section.append(markup(headingId));
  container.append(section);
  ui.section = section;
  ui.heading = section.querySelector("h2");
  ui.recent = section.querySelector(".permissions-recent");
  ui.recentEmpty = section.querySelector(".permissions-recent-empty");
  ui.rules = section.querySelector(".permission-rules");
  ui.rulesEmpty = section.querySelector(".permission-rules-empty");
  store.on("permissions", renderRecent);
  renderRecent(store.get("permissions"));
}

/** The requests answered (or expired) last, newest first, from the listing core/needs.js read. */
function renderRecent(requests) {
  const all = Array.isArray(requests) ? requests : [];
  const recent = all
    .filter((p) => p.status !== "pending")
    .sort((a, b) => closedAt(b).localeCompare(closedAt(a)))
    .slice(0, RECENT);
  reconcile(ui.recent, recent, (p) => `${p.id}:${p.status}`, recentItem);
  ui.recentEmpty.hidden = recent.length > 0;
}

/** Read the rules: in the rounds that do the costly reads (and at once after a decision). */
export async function refresh(current, full) {
  if (!ui.section || (read && !full)) return;
  const ruled = await store.api("GET", store.ws("/permission-rules"));
  if (!current()) return;
  read = true;
  const rules = Array.isArray(ruled && ruled.rules) ? ruled.rules : [];
  reconcile(ui.rules, rules, (r) => r.tool, ruleItem);
  ui.rulesEmpty.hidden = rules.length > 0;
}

/** Forget what was shown: a sign-out or another workspace. */
export function reset() {
  read = false;
  if (!ui.section) return;
  renderRecent(store.get("permissions")); // cleared with the inbox (core/needs.js clearNeeds)
  ui.rules.replaceChildren();
  ui.rulesEmpty.hidden = false;
  clearError(ui.section);
}

function closedAt(request) {
  return String(request.decidedAt || request.expiresAt || request.createdAt || "");
}

function recentItem(request) {
  const li = el("li", { className: "permission-done" });
  li.append(
    el("strong", { text: request.toolName }),
    " ",
    el("span", { className: `badge perm-${request.status}`, text: STATUS_NAMES[request.status] || request.status }),
    el("span", { className: "meta" }, " · ", timeEl(closedAt(request))),
  );
  if (request.description) li.append(el("p", { className: "meta one-line", text: request.description }));
  return li;
}

function ruleItem(rule) {
  const li = el("li", { className: "permission-rule" });
  const revoke = el("button", { type: "button", className: "secondary small", text: "Revoke" });
  revoke.setAttribute("aria-label", `Revoke always allow for ${rule.tool}`);
  revoke.addEventListener("click", () => revokeRule(rule.tool, li, revoke));
  const since = el("span", { className: "meta" }, " · since ", timeEl(rule.createdAt), " ");
  li.append(el("code", { text: rule.tool }), since, revoke);
  return li;
}

async function revokeRule(tool, li, button) {
  if (button.disabled) return;
  button.disabled = true;
  try {
    await store.api("DELETE", store.ws(`/permission-rules/${seg(tool)}`));
    const hadFocus = li.contains(document.activeElement) || document.activeElement === document.body;
    const next = li.nextElementSibling || li.previousElementSibling;
    li.remove();
    ui.rulesEmpty.hidden = ui.rules.children.length > 0;
    if (hadFocus) focusAfter(next);
    clearError(ui.section);
    done(`${tool} is no longer always allowed: Claude Code will ask again.`);
    kick();
  } catch (error) {
    button.disabled = false;
    showError(error, `Revoking always allow for ${tool} failed`, ui.section);
    if (error instanceof ApiError && error.status === 404) kick(); // revoked elsewhere
  }
}

/** Keyboard focus after a rule left: the next rule's button, or the section's heading. */
function focusAfter(next) {
  const target = (next && next.querySelector("button")) || ui.heading;
  if (target === ui.heading) target.setAttribute("tabindex", "-1");
  target.focus();
}
