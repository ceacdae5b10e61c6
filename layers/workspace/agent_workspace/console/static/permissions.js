// The console's tool permissions (issue 19): Claude Code, through the channel bridge, asks to use a tool, and
// the human allows it once, denies it, or always allows that tool in the workspace.
//
// It heads the "needs you" list, as "Tool approvals": a request blocks Claude Code until it is answered, and
// expires after 10 minutes. Pending requests are read in every polling round; the few last answered (or expired)
// ones and the tools always allowed here sit under them, each rule with a Revoke button.
//
// The same rules as app.js: what the server sends (the tool's name, description and input come from the agent,
// so untrusted) reaches the page through textContent and attributes set one by one, never innerHTML; lists are
// reconciled by key.

const RECENT = 5; // answered or expired requests shown
const STATUS_NAMES = { allowed: "Allowed", denied: "Denied", expired: "Expired", pending: "Pending" };
const DECISIONS = [
  ["allow", "Allow", "", "Allowed"],
  ["deny", "Deny", "danger", "Denied"],
  ["always", "Always allow", "secondary", "Always allowed"],
];

/** The panel, wired to the console's helpers (`ui`): its API client, DOM helpers, messages and polling. */
export function createPermissions(ui) {
  const { api, ApiError, el, seg, ws, timeEl, reconcile, nextId } = ui;
  const { announce, showError, clearError, handleAuthFailure, kick } = ui;
  const $ = (id) => document.getElementById(id);

  let seen = null; // ids pending at the last refresh; null before the first one
  const answered = new Set(); // decided from this page: a listing read before the decision must not bring it back

  async function refresh(current) {
    const [listed, ruled] = await Promise.all([api("GET", ws("/permissions")), api("GET", ws("/permission-rules"))]);
    if (!current()) return;
    const all = Array.isArray(listed && listed.permissions) ? listed.permissions : [];
    const rules = Array.isArray(ruled && ruled.rules) ? ruled.rules : [];
    for (const id of [...answered]) {
      const now = all.find((p) => p.id === id);
      if (!now || now.status !== "pending") answered.delete(id);
    }
    const pending = all.filter((p) => p.status === "pending" && !answered.has(p.id));
    await ui.learnTitles(pending.map((p) => p.taskId).filter(Boolean), current);
    if (!current()) return;

    const fresh = seen ? pending.filter((p) => !seen.has(p.id)) : [];
    seen = new Set(pending.map((p) => p.id));
    reconcile($("permissions-list"), pending, (p) => p.id, requestCard, updateRequestCard);
    showPending(pending.length);
    if (fresh.length === 1) announce(`Claude Code asks to use ${fresh[0].toolName}: ${fresh[0].description}`);
    else if (fresh.length > 1) announce(`${fresh.length} new tool requests wait for your approval.`);

    const recent = all
      .filter((p) => p.status !== "pending")
      .sort((a, b) => closedAt(b).localeCompare(closedAt(a)))
      .slice(0, RECENT);
    reconcile($("permissions-recent"), recent, (p) => `${p.id}:${p.status}`, recentItem);
    $("permissions-recent-empty").hidden = recent.length > 0;

    reconcile($("permission-rules"), rules, (r) => r.tool, ruleItem);
    $("permission-rules-empty").hidden = rules.length > 0;
  }

  function closedAt(request) {
    return String(request.decidedAt || request.expiresAt || request.createdAt || "");
  }

  function showPending(n) {
    $("permissions-empty").hidden = n > 0;
    $("permissions-hint").hidden = n === 0;
    $("permissions-count").textContent = n ? `(${n})` : "";
    $("permissions").classList.toggle("waiting", n > 0);
    ui.setNeeds("permissions", n);
  }

  // -- a request waiting for the human ------------------------------------------------------------------

  function requestCard(request) {
    const headingId = nextId("perm");
    const inputId = nextId("perm-input");
    const card = el("article", { className: "item permission" });
    card.setAttribute("aria-labelledby", headingId);
    const where = el("p", { className: "meta" }, "Asked ", timeEl(request.createdAt), " · until ",
      timeEl(request.expiresAt));
    if (request.taskId) {
      const link = el("a", { href: ui.taskHref(request.taskId), className: "task-link" });
      where.append(" · in ", link);
    }
    card.append(el("h4", { id: headingId, text: request.toolName }), where);
    if (request.description) card.append(el("p", { className: "text", text: request.description }));
    if (request.inputPreview) {
      card.append(
        el("p", { id: inputId, className: "label", text: "Input" }),
        el("pre", { className: "doc", text: request.inputPreview, "aria-labelledby": inputId }),
      );
    }
    const actions = el("div", { className: "actions" });
    for (const [decision, label, tone, done] of DECISIONS) {
      const button = el("button", { type: "button", className: tone, text: label });
      if (decision === "always") button.title = `Allow ${request.toolName} now and from now on in this workspace`;
      button.addEventListener("click", () => decide(request, decision, done, card));
      actions.append(button);
    }
    card.append(actions);
    updateRequestCard(card, request);
    return card;
  }

  function updateRequestCard(card, request) {
    const link = card.querySelector("a.task-link");
    if (link) link.textContent = ui.taskLabel(request.taskId);
  }

  async function decide(request, decision, done, card) {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", ws(`/permissions/${seg(request.id)}`), { decision });
      answered.add(request.id);
      seen?.delete(request.id);
      remove(card, "permissions-h");
      showPending($("permissions-list").children.length);
      clearError();
      announce(`${done}: ${request.toolName}${decision === "always" ? " (in this workspace, from now on)" : ""}`);
      kick();
    } catch (error) {
      for (const b of card.querySelectorAll("button")) b.disabled = false;
      const context = `Answering Claude Code's request to use ${request.toolName} failed`;
      if (!handleAuthFailure(error)) showError(error, context);
      if (error instanceof ApiError && error.status === 409) kick(); // answered elsewhere, or expired
    }
  }

  /** Remove a card or item; keyboard focus goes to the next one's first control or heading, or to `headingId`. */
  function remove(node, headingId) {
    const hadFocus = node.contains(document.activeElement);
    const next = node.nextElementSibling || node.previousElementSibling;
    node.remove();
    if (!hadFocus) return;
    const target = (next && next.querySelector("h4, button")) || $(headingId);
    if (target.tagName === "H4") target.setAttribute("tabindex", "-1");
    target.focus();
  }

  // -- answered ones, and the rules -----------------------------------------------------------------------

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
    li.append(
      el("code", { text: rule.tool }),
      el("span", { className: "meta" }, " · since ", timeEl(rule.createdAt), " "),
      revoke,
    );
    return li;
  }

  async function revokeRule(tool, li, button) {
    button.disabled = true;
    try {
      await api("DELETE", ws(`/permission-rules/${seg(tool)}`));
      remove(li, "permission-rules-h");
      $("permission-rules-empty").hidden = $("permission-rules").children.length > 0;
      clearError();
      announce(`${tool} is no longer always allowed: Claude Code will ask again.`);
      kick();
    } catch (error) {
      button.disabled = false;
      if (!handleAuthFailure(error)) showError(error, `Revoking always allow for ${tool} failed`);
      if (error instanceof ApiError && error.status === 404) kick(); // revoked elsewhere
    }
  }

  /** Forget what was shown: a sign-out or another workspace. */
  function reset() {
    seen = null;
    answered.clear();
    for (const id of ["permissions-list", "permissions-recent", "permission-rules"]) $(id).replaceChildren();
    $("permissions-recent-empty").hidden = false;
    $("permission-rules-empty").hidden = false;
    showPending(0);
  }

  return { refresh, reset };
}
