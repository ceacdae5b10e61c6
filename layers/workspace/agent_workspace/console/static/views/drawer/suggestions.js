// An agent's suggested summary and acceptance criteria for the task, waiting for the human to accept them (they
// become the task's) or discard them. They sit after the details; a note under the decision points to them.

import * as store from "../../core/store.js";
import { ApiError, seg } from "../../core/api.js";
import { el, fragment, nextId, reconcile } from "../../core/dom.js";
import { done, showError } from "../../core/feedback.js";
import { timeEl, who } from "../../core/format.js";
import { markdown } from "../../core/markdown.js";
import { kick } from "../../core/refresh.js";
import { focusHeading } from "./header.js";

let section = null;
let list = null;
let note = null;
const decided = new Set(); // decided here: a listing read before the decision must not bring one back

export function mountSuggestions() {
  section = el("section", { className: "task-suggestions", hidden: true });
  section.append(
    fragment(`
      <h3>Suggested by the agent</h3>
      <div class="stack"></div>`),
  );
  const heading = section.querySelector("h3");
  heading.id = nextId("suggestions-h");
  section.setAttribute("aria-labelledby", heading.id);
  list = section.querySelector(".stack");
  return section;
}

/** The note under the decision: "The agent suggested…", with a button that goes to the suggestion. */
export function mountSuggestionNote() {
  note = el("p", { className: "suggestion-note", hidden: true }, "The agent suggested a summary and criteria. ");
  const go = el("button", { type: "button", className: "linkish", text: "Review the suggestion" });
  go.addEventListener("click", () => {
    const first = list.firstElementChild;
    if (!first) return;
    first.scrollIntoView({ block: "start" });
    first.focus();
  });
  note.append(go);
  return note;
}

function showCount() {
  section.hidden = list.children.length === 0;
  note.hidden = section.hidden;
}

export function clearSuggestions() {
  list.replaceChildren();
  showCount();
}

export function renderSuggestions(detail) {
  const listed = Array.isArray(detail.pendingSuggestions) ? detail.pendingSuggestions : [];
  for (const id of [...decided]) if (!listed.some((s) => s.id === id)) decided.delete(id);
  const pending = listed.filter((s) => !decided.has(s.id));
  reconcile(list, pending, (s) => `${detail.id}:${s.id}`, (s) => suggestionItem(detail.id, s));
  showCount();
}

function suggestionItem(taskId, suggestion) {
  const headingId = nextId("sugg");
  const box = el("section", { className: "item suggestion", "aria-labelledby": headingId, tabIndex: -1 });
  box.append(el("h4", { id: headingId }, `From ${who(suggestion.by)} · `, timeEl(suggestion.at)));
  if (suggestion.summary) box.append(el("p", { className: "label", text: "Summary" }), markdown(suggestion.summary));
  if (Array.isArray(suggestion.criteria) && suggestion.criteria.length) {
    const criteria = el("ol", { className: "criteria" });
    for (const text of suggestion.criteria) criteria.append(el("li", { text }));
    box.append(el("p", { className: "label", text: "Acceptance criteria" }), criteria);
  }
  const accept = el("button", { type: "button", text: "Accept suggestion" });
  const discard = el("button", { type: "button", className: "secondary", text: "Discard suggestion" });
  accept.addEventListener("click", () => decide(taskId, suggestion, true, box));
  discard.addEventListener("click", () => decide(taskId, suggestion, false, box));
  box.append(el("div", { className: "actions" }, accept, discard));
  return box;
}

async function decide(taskId, suggestion, accept, box) {
  const buttons = Array.from(box.querySelectorAll("button"));
  for (const b of buttons) b.disabled = true;
  try {
    const path = `/board/tasks/${seg(taskId)}/suggestions/${seg(suggestion.id)}`;
    const task = await store.api(accept ? "POST" : "DELETE", store.ws(accept ? `${path}/accept` : path));
    decided.add(suggestion.id);
    const hadFocus = box.contains(document.activeElement);
    box.remove();
    showCount();
    if (hadFocus) focusHeading();
    if (task && task.id) store.emit("taskChanged", task);
    done(accept ? "Suggestion accepted: the task has its summary and criteria." : "Suggestion discarded.");
    kick();
  } catch (error) {
    for (const b of buttons) b.disabled = false;
    showError(error, accept ? "Accepting the suggestion failed" : "Discarding the suggestion failed", box);
    if (error instanceof ApiError && error.status === 409) kick();
  }
}
