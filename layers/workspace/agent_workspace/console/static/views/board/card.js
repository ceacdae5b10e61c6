// One card on the board: what a human scans a column for (title, identifier, priority, labels, who it is for,
// how old it is, its comments and criteria, what it waits on) and whether it asks the human something.
//
// A card is built once per task and then only updated: each part is replaced when what it says changed (a
// signature of the values, not of the DOM), so a refresh keeps the human's selection, focus and place.
// Everything the server sent reaches the page as text (agents write titles and labels).

import * as store from "../../core/store.js";
import { el, nextId, replaceIfChanged, setAttr, setText } from "../../core/dom.js";
import { PRIORITY_NAMES, assigneeName, plural, timeEl } from "../../core/format.js";
import { asksFor } from "../../core/needs.js";

const WAITING_NAMED = 3; // blockers named on the card; more are counted

const ASK_NAMES = {
  permissions: "a tool permission",
  questions: "a question",
  blockers: "it is blocked",
  siteCalls: "a site-tool call",
  triage: "a proposal to triage",
  reviews: "a delivery to review",
};

/** A new card for `task` (`open(task)` when it is clicked); reconcile() gives it its key. */
export function boardCard(task, open) {
  const li = el("li", { className: "board-card" });
  const topId = nextId("card-top");
  const metaId = nextId("card-meta");
  const button = el("button", { type: "button", className: "card-open" });
  button.setAttribute("aria-describedby", `${topId} ${metaId}`);
  button.addEventListener("click", () => open(li.task));
  // The whole card opens the task, except when the click ends selecting its text (the human copies a title).
  li.addEventListener("click", (event) => {
    if (event.target.closest("button, a") || !window.getSelection().isCollapsed) return;
    open(li.task);
  });
  const asks = el("span", { className: "asks-you", hidden: true, text: "Asks you" });
  li.append(
    el("p", { className: "card-top", id: topId },
      el("span", { className: "ident" }), el("span", { className: "card-prio" }), asks),
    button,
    el("p", { className: "card-tags" }),
    el("p", { className: "card-facts", id: metaId }),
  );
  updateBoardCard(li, task);
  return li;
}

/** Bring a card in step with the task as last read. */
export function updateBoardCard(li, task) {
  li.task = task;
  store.learnTask(task);
  const priority = task.priority && task.priority !== "none" ? task.priority : "";
  setAttr(li, "class", `board-card${priority ? ` prio-${priority}` : ""}${task.archived ? " archived" : ""}`);
  setAttr(li, "data-ident", task.identifier || "");
  setText(li.querySelector(".card-open"), task.title);
  setText(li.querySelector(".ident"), task.identifier || "");
  const prio = li.querySelector(".card-prio");
  replaceIfChanged(
    prio,
    priority ? [el("span", { className: `badge prio prio-${priority}`, text: PRIORITY_NAMES[priority] })] : [],
    priority,
  );
  const labels = Array.isArray(task.labels) ? task.labels : [];
  const tags = li.querySelector(".card-tags");
  replaceIfChanged(tags, labels.map((label) => el("span", { className: "tag", text: label })), JSON.stringify(labels));
  setAttr(tags, "hidden", labels.length === 0 ? "" : null);
  updateFacts(li.querySelector(".card-facts"), task);
  markAsks(li);
}

// Who it is for, its age, comments, criteria, what it waits on, archived: one line, rebuilt only when one changed.
function updateFacts(node, task) {
  const criteria = Array.isArray(task.criteria) ? task.criteria : [];
  const met = criteria.filter((c) => c.met === true).length;
  const comments = Number(task.commentCount) || 0;
  const waiting = Array.isArray(task.waitingOn) ? task.waitingOn : [];
  const named = waiting.slice(0, WAITING_NAMED).map((id) => store.taskIdentifier(id) || "another task");
  const values = [assigneeName(task), task.createdAt, comments, met, criteria.length, named, waiting.length,
    Boolean(task.archived)];
  const parts = [el("span", { className: "assignee", title: "Assignee", text: assigneeName(task) })];
  if (task.createdAt) parts.push(el("span", { className: "age" }, "created ", timeEl(task.createdAt)));
  if (comments > 0) parts.push(el("span", { className: "comments", text: plural(comments, "comment") }));
  if (criteria.length) {
    const done = met === criteria.length ? " all-met" : "";
    parts.push(el("span", { className: `criteria${done}`, text: `${met}/${criteria.length} criteria` }));
  }
  if (waiting.length) {
    const more = waiting.length > WAITING_NAMED ? ` +${waiting.length - WAITING_NAMED}` : "";
    const titles = waiting.map((id) => store.taskLabel(id)).join("; ");
    parts.push(el("span", { className: "waiting", title: titles, text: `Waiting on ${named.join(", ")}${more}` }));
  }
  if (task.archived) parts.push(el("span", { className: "badge archived-badge", text: "archived" }));
  replaceIfChanged(node, parts, JSON.stringify(values));
}

/** The "Asks you" marker, from what core/needs.js read last (the inbox's lists), and what it is about. */
export function markAsks(li) {
  const task = li.task;
  const asks = task ? asksFor(task.id) : [];
  const marker = li.querySelector(".asks-you");
  setAttr(marker, "hidden", asks.length === 0 ? "" : null);
  if (!asks.length) return;
  const blocker = asks.find((a) => a.kind === "blockers");
  const questions = blocker && Array.isArray(blocker.item.questions) ? blocker.item.questions.length : 0;
  const what = [...new Set(asks.map((a) => ASK_NAMES[a.kind] || a.kind))];
  if (questions) what.splice(what.indexOf(ASK_NAMES.blockers), 1, `blocked on ${plural(questions, "question")}`);
  setAttr(marker, "title", `Waiting on your answer: ${what.join(", ")}`);
}

/** Mark the card of the open task (its id or its identifier, as the address names it); whether it is it. */
export function markCurrent(li, ref) {
  const current = Boolean(ref) && (li.dataset.key === ref || (li.dataset.ident !== "" && li.dataset.ident === ref));
  setAttr(li.querySelector(".card-open"), "aria-current", current ? "true" : null);
  return current;
}
