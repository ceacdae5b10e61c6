// The task's other moves, under what it asks of the human: Release (take it back from an agent), Move to the
// backlog or ready, Archive… (with a reason), and AgentRQ's status. What the server answers is published as
// the store event "taskChanged", so the drawer shows the result before the next round reads it.

import * as store from "../../core/store.js";
import { ApiError, seg } from "../../core/api.js";
import { el, nextId } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { COLUMN_NAMES, STATUSES, STATUS_NAMES, timeEl, who } from "../../core/format.js";
import { kick } from "../../core/refresh.js";
import { focusHeading } from "./header.js";

let box = null;
let moves = null; // rebuilt only when what the task allows changes: an archive reason typed stays
let statusForm = null;
let statusSelect = null;

export function mountActions() {
  box = el("div", { className: "task-actions" });
  moves = el("div", { className: "task-moves" });
  const selectId = nextId("status");
  statusSelect = el("select", { id: selectId, className: "status-select" });
  for (const status of STATUSES) statusSelect.append(el("option", { value: status, text: STATUS_NAMES[status] }));
  statusForm = el(
    "form",
    { className: "status-form", noValidate: true },
    el("label", { htmlFor: selectId, text: "Status" }),
    statusSelect,
    el("button", { type: "submit", className: "secondary small", text: "Set status" }),
  );
  statusForm.addEventListener("submit", setStatus);
  box.append(moves, statusForm);
  return box;
}

export function clearActions() {
  moves.replaceChildren();
  moves.dataset.for = "";
  statusForm.dataset.task = "";
  statusSelect.dataset.for = "";
  clearError(box);
}

export function renderActions(task) {
  statusForm.dataset.task = task.id;
  // The status shown follows the server unless the human is choosing one right now.
  if (document.activeElement !== statusSelect && statusSelect.dataset.for !== `${task.id}:${task.status}`) {
    statusSelect.value = task.status;
    statusSelect.dataset.for = `${task.id}:${task.status}`;
  }
  const key = `${task.id}:${task.column}:${task.archived ? "archived" : ""}:${task.claim ? "claimed" : ""}`;
  if (moves.dataset.for === key) return;
  const hadFocus = moves.contains(document.activeElement);
  moves.dataset.for = key;
  moves.replaceChildren(...buildMoves(task));
  if (hadFocus) focusHeading();
}

function buildMoves(task) {
  if (task.archived) {
    const { at, by, reason } = task.archived;
    return [el("p", { className: "meta" }, "Archived ", timeEl(at), ` by ${who(by)}: ${reason}`)];
  }
  const row = el("div", { className: "actions" });
  const parts = [row];
  const working = task.column === "in_progress" || task.column === "blocked" || task.claim;
  if (working) {
    const hintId = nextId("release-hint");
    const release = el("button", { type: "button", className: "secondary small", text: "Release" });
    release.setAttribute("aria-describedby", hintId);
    release.addEventListener("click", () =>
      act("POST", task.id, "/release", undefined, "Released: back in ready.", "Releasing failed"),
    );
    row.append(release);
    const hint = "Release takes the task back from the agent: it returns to ready.";
    parts.push(el("p", { id: hintId, className: "hint", text: hint }));
  }
  if ((task.column === "backlog" || task.column === "ready") && !task.claim) {
    const to = task.column === "backlog" ? "ready" : "backlog";
    const name = COLUMN_NAMES[to];
    const move = el("button", { type: "button", className: "secondary small", text: `Move to ${name.toLowerCase()}` });
    move.addEventListener("click", () =>
      act("PATCH", task.id, "", { column: to }, `Moved to ${name}.`, "Moving the task failed"),
    );
    row.append(move);
  }
  const toggle = el("button", { type: "button", className: "secondary small", text: "Archive…" });
  toggle.setAttribute("aria-expanded", "false");
  row.append(toggle);
  parts.push(archiveForm(task, toggle));
  return parts;
}

function archiveForm(task, toggle) {
  const reasonId = nextId("reason");
  const form = el("form", { className: "archive-form", hidden: true, noValidate: true });
  const reason = el("input", { id: reasonId, type: "text", autocomplete: "off" });
  const cancel = el("button", { type: "button", className: "secondary", text: "Cancel" });
  form.append(
    el("label", { htmlFor: reasonId, text: "Archive reason" }),
    reason,
    el("div", { className: "actions" }, el("button", { type: "submit", className: "danger", text: "Archive task" }),
      cancel),
  );
  toggle.setAttribute("aria-controls", (form.id = nextId("archive")));
  toggle.addEventListener("click", () => {
    form.hidden = !form.hidden;
    toggle.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) reason.focus();
  });
  cancel.addEventListener("click", () => {
    form.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    toggle.focus();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!reason.value.trim()) {
      showError(new Error("say why the task is archived"), "Archiving the task", form);
      reason.focus();
      return;
    }
    const archived = "Archived: the task left the board.";
    act("POST", task.id, "/archive", { reason: reason.value }, archived, "Archiving the task failed");
  });
  return form;
}

/** One move (`rest` under the task's board path): its buttons wait, the drawer shows the result, focus goes to
 * the task's title. */
async function act(method, taskId, rest, body, said, context) {
  const buttons = Array.from(box.querySelectorAll("button"));
  for (const b of buttons) b.disabled = true;
  try {
    const task = await store.api(method, store.ws(`/board/tasks/${seg(taskId)}${rest}`), body);
    clearError(box);
    if (task) {
      store.learnTask(task);
      store.emit("taskChanged", task);
    }
    focusHeading();
    done(`${task && task.identifier ? `${task.identifier}: ` : ""}${said}`);
    kick();
  } catch (error) {
    showError(error, context, box);
    if (error instanceof ApiError && error.status === 409) kick(); // it changed meanwhile: show what it is now
  } finally {
    for (const b of buttons) if (b.isConnected) b.disabled = false;
  }
}

async function setStatus(event) {
  event.preventDefault();
  const taskId = statusForm.dataset.task;
  if (!taskId) return;
  const button = statusForm.querySelector("button");
  button.disabled = true;
  try {
    const task = await store.api("PATCH", store.ws(`/tasks/${seg(taskId)}`), { status: statusSelect.value });
    clearError(box);
    statusSelect.dataset.for = `${task.id}:${task.status}`;
    store.emit("taskChanged", task);
    done(`Status of ${task.title} set to ${STATUS_NAMES[task.status] || task.status}.`);
    kick();
  } catch (error) {
    showError(error, "Changing the status failed", box);
  } finally {
    button.disabled = false;
  }
}
