// The one way to create a task from the console: a dialog opened by "New task" (or "c"), closed by Esc or
// Cancel. Closing keeps what was typed (an Esc by mistake loses nothing); creating clears it.
//
// Two endpoints create tasks: POST …/board/tasks takes every board field (column, priority, labels, criteria,
// assignee) but no files; POST …/tasks (AgentRQ's) takes files but no board field, and puts the task in the
// agent's queue (ready) at once. So: without files, the board's endpoint does it all in one write. With files
// for an agent's ready task, AgentRQ's creates it with the files on the task, then PATCH sets the board fields
// (the human may edit a task an agent already claimed). With files for anything else (backlog, triage, the
// human's own task), the board's endpoint creates it where it belongs (never in the agent's queue, even for a
// moment) and the files follow as the task's first message.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { kick } from "../../core/refresh.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { fragment, setText } from "../../core/dom.js";
import { COLUMN_NAMES } from "../../core/format.js";
import { MAX_FILES, readFiles } from "../../core/files.js";

const MARKUP = `
<dialog class="dialog board-create" aria-labelledby="new-task-h">
  <form novalidate>
    <h2 id="new-task-h">New task</h2>
    <label for="nt-title">Title <span class="required" aria-hidden="true">*</span></label>
    <input id="nt-title" type="text" maxlength="500" autocomplete="off" required>
    <label for="nt-description">Description</label>
    <textarea id="nt-description" rows="4" aria-describedby="nt-description-hint"></textarea>
    <p id="nt-description-hint" class="hint">Markdown: what to do, and why.</p>
    <div class="create-row">
      <div class="field">
        <label for="nt-column">Column</label>
        <select id="nt-column">
          <option value="ready">Ready</option>
          <option value="backlog">Backlog</option>
          <option value="triage">Triage</option>
        </select>
      </div>
      <div class="field">
        <label for="nt-priority">Priority</label>
        <select id="nt-priority">
          <option value="">No priority</option>
          <option value="urgent">Urgent</option>
          <option value="high">High</option>
          <option value="medium">Medium</option>
          <option value="low">Low</option>
        </select>
      </div>
      <div class="field">
        <label for="nt-assignee">For</label>
        <select id="nt-assignee">
          <option value="agent">An agent</option>
          <option value="human">Me</option>
        </select>
      </div>
    </div>
    <label for="nt-labels">Labels (comma-separated)</label>
    <input id="nt-labels" type="text" autocomplete="off" aria-describedby="nt-labels-hint">
    <p id="nt-labels-hint" class="hint"></p>
    <label for="nt-criteria">Acceptance criteria (one a line)</label>
    <textarea id="nt-criteria" rows="3"></textarea>
    <label for="nt-files">Files</label>
    <input id="nt-files" type="file" multiple aria-describedby="nt-files-hint">
    <p id="nt-files-hint" class="hint">At most ${MAX_FILES} files, 4 MiB in all.</p>
    <div class="actions">
      <button type="submit">Create task</button>
      <button type="button" class="secondary nt-cancel">Cancel</button>
    </div>
  </form>
</dialog>`;

let dialog = null;
let form = null;
let opener = null; // where focus returns when the dialog closes
let onCreated = () => {};

/** The dialog (hidden until `openCreate`); `created(task)` hears each task made. */
export function buildCreate(created) {
  onCreated = created;
  dialog = fragment(MARKUP).firstElementChild;
  form = dialog.querySelector("form");
  form.addEventListener("submit", submit);
  dialog.querySelector(".nt-cancel").addEventListener("click", closeCreate);
  // Esc closes this dialog and nothing else (the drawer behind it listens for Esc too).
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    event.stopPropagation();
    closeCreate();
  });
  dialog.addEventListener("close", () => {
    if (opener && opener.isConnected) opener.focus();
    opener = null;
  });
  return dialog;
}

export function openCreate() {
  if (!dialog || dialog.open) return;
  opener = document.activeElement;
  const board = store.get("board");
  const labels = board && Array.isArray(board.labels) ? board.labels : [];
  setText(dialog.querySelector("#nt-labels-hint"), labels.length ? `On this board: ${labels.join(", ")}` : "");
  dialog.showModal();
  dialog.querySelector("#nt-title").focus();
}

export function closeCreate() {
  if (dialog && dialog.open) dialog.close();
}

/** Forget the draft (another workspace, or signed out). */
export function resetCreate() {
  closeCreate();
  if (form) {
    form.reset();
    clearError(form);
  }
}

function field(id) {
  return form.querySelector(`#${id}`);
}

function lines(text, separator) {
  return text.split(separator).map((part) => part.trim()).filter(Boolean);
}

async function submit(event) {
  event.preventDefault();
  const title = field("nt-title").value.trim();
  if (!title) {
    showError(new Error("give the task a title"), "Creating the task", form);
    field("nt-title").focus();
    return;
  }
  const button = event.submitter || form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const task = await create(title);
    store.learnTask(task);
    form.reset();
    clearError(form);
    closeCreate();
    done(`${task.identifier || "The task"} ${task.title} added to ${COLUMN_NAMES[task.column] || task.column}.`);
    onCreated(task);
    kick();
  } catch (error) {
    showError(error, "Creating the task failed", form);
  } finally {
    button.disabled = false;
  }
}

async function create(title) {
  const description = field("nt-description").value;
  const column = field("nt-column").value;
  const assignee = field("nt-assignee").value;
  const extra = {};
  if (field("nt-priority").value) extra.priority = field("nt-priority").value;
  const labels = lines(field("nt-labels").value, ",");
  if (labels.length) extra.labels = labels;
  const criteria = lines(field("nt-criteria").value, "\n");
  if (criteria.length) extra.criteria = criteria;
  const files = await readFiles(field("nt-files"), "task");

  if (!files.length || column !== "ready" || assignee !== "agent") {
    const task = await store.api("POST", store.ws("/board/tasks"), { title, description, column, assignee, ...extra });
    if (files.length) {
      const text = `Files for this task: ${files.map((f) => f.filename).join(", ")}`;
      await attachLater(task, () => store.api("POST", store.ws(`/tasks/${seg(task.id)}/messages`), {
        text, attachments: files,
      }));
    }
    return task;
  }
  const made = await store.api("POST", store.ws("/tasks"), { title, body: description, attachments: files });
  if (!Object.keys(extra).length) return made;
  return attachLater(made, () => store.api("PATCH", store.ws(`/board/tasks/${seg(made.id)}`), extra));
}

// The task exists once the first call succeeded: a failure of the second says so rather than inviting a retry
// that would make the task twice.
async function attachLater(task, call) {
  try {
    const changed = await call();
    return changed && changed.id ? changed : task;
  } catch (error) {
    kick();
    error.message = `${task.identifier || task.id} was created, but ${error.message}`;
    if ("detail" in error) error.detail = `${task.identifier || task.id} was created, but ${error.detail}`;
    form.reset();
    throw error;
  }
}
