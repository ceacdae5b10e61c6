// What every answer card shares: its frame (what kind of ask, a heading, the task it belongs to, its age) and
// the one way a decision is sent. The legacy console wrote the "decide a card" flow three times (questions,
// site calls, tool permissions) and the task panel's a fourth; here it is written once.

import * as store from "../../core/store.js";
import * as router from "../../core/router.js";
import { ApiError } from "../../core/api.js";
import { el, nextId, setAttr, setText } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { markDecided } from "../../core/needs.js";
import { kick } from "../../core/refresh.js";

/** What each kind of ask is called on its card (the inbox's filter chips use the plural). */
export const KIND_TAGS = {
  permissions: "Tool approval",
  questions: "Question",
  blockers: "Blocked",
  siteCalls: "Site tool",
  triage: "Proposal",
  reviews: "Delivery",
};

/**
 * An <article class="answer-card"> named by its heading: a small tag saying the kind, the heading (text, or a
 * node such as the task's link) and a meta line. Returns {card, heading, meta}.
 */
export function frame(kind, heading, options = {}) {
  const headingId = nextId("answer");
  const level = options.headingLevel || 3;
  const card = el("article", { className: `answer-card kind-${kind}`, tabIndex: -1 });
  card.setAttribute("aria-labelledby", headingId);
  const title = el(`h${level}`, { id: headingId, className: "answer-title" }, heading);
  const meta = el("p", { className: "meta answer-meta" });
  const tag = el("span", { className: "answer-kind", text: KIND_TAGS[kind] });
  card.append(el("header", { className: "answer-head" }, tag, title, meta));
  return { card, heading: title, meta };
}

/** The address of a task's drawer: by its short identifier when the page knows it (it reads better). */
export function taskHref(taskId) {
  return router.href({ view: "task", id: store.taskIdentifier(taskId) || taskId });
}

/** A link to the task an ask belongs to ("WS-12 Fix the build"); following it opens the task's drawer. */
export function taskLink(taskId, text) {
  const link = el("a", { className: "task-link", href: taskHref(taskId), text: text || store.taskLabel(taskId) });
  link.dataset.taskId = taskId;
  return link;
}

/** Bring a card's task links up to date, once the page learned the task's title or identifier. */
export function refreshTaskLinks(card) {
  for (const link of card.querySelectorAll("a.task-link[data-task-id]")) {
    const taskId = link.dataset.taskId;
    if (!link.dataset.fixedText) setText(link, store.taskLabel(taskId));
    setAttr(link, "href", taskHref(taskId));
  }
}

/** A row of buttons: [[label, tone, onClick, extra props]]. */
export function buttonRow(choices) {
  const row = el("div", { className: "actions" });
  for (const [label, tone, onClick, props = {}] of choices) {
    const button = el("button", { type: "button", className: tone || "", text: label, ...props });
    button.addEventListener("click", onClick);
    row.append(button);
  }
  return row;
}

/**
 * Send one decision from `card` to `path()` under the workspace (a function, called inside the try: an id that
 * no address can carry, such as "..", is said in the card like any refusal). Its buttons wait while the call
 * runs (a double click is one call). On success the item leaves the inbox at once (markDecided), the human is
 * told (`success`: text, or a function of the server's answer), `onDecided(answer)` hears it and a refresh round
 * starts. On failure the server's reason shows inside the card; when the item is gone (409: answered elsewhere,
 * expired, no longer blocked; 404) the card is about to leave with the refresh it kicks, so the reason goes to a
 * toast that outlives it; otherwise `onFailed(error)` may put the focus on the field the server named.
 */
export async function decide(card, { kind, id, path, body, method = "POST", context, success, onDecided, onFailed }) {
  if (card.dataset.busy) return null;
  card.dataset.busy = "true";
  card.setAttribute("aria-busy", "true");
  const buttons = Array.from(card.querySelectorAll("button:not(:disabled)"));
  for (const button of buttons) button.disabled = true;
  try {
    const answer = await store.api(method, store.ws(path()), body);
    clearError(card);
    markDecided(kind, id);
    done(typeof success === "function" ? success(answer) : success);
    if (onDecided) onDecided(answer);
    kick();
    return answer;
  } catch (error) {
    const gone = error instanceof ApiError && (error.status === 409 || error.status === 404);
    showError(error, context, gone ? null : card);
    if (onFailed && !gone) onFailed(error);
    if (gone || (error instanceof ApiError && error.status === 401)) kick(); // a refused token: the round signs out
    return null;
  } finally {
    delete card.dataset.busy;
    card.removeAttribute("aria-busy");
    for (const button of buttons) button.disabled = false;
  }
}

/** A problem with what the human filled in, shown in the card, with the field to fix focused. */
export function refuse(card, message, context, field) {
  showError(new Error(message), context, card);
  if (field) field.focus();
}

/** A textarea with its label, for a decision's comment: {node, field}. */
export function commentField(labelText, { rows = 2, className = "decision-comment" } = {}) {
  const id = nextId("comment");
  const field = el("textarea", { id, rows, className });
  return { node: el("div", { className: "field" }, el("label", { htmlFor: id, text: labelText }), field), field };
}

/** The field a 422 names ("content.code: …", "answers[1]: …"), found by `lookup(name)`, focused. */
export function focusNamed(error, pattern, lookup) {
  const match = pattern.exec(String((error && error.detail) || ""));
  const field = match ? lookup(match[1]) : null;
  if (field) field.focus();
}
