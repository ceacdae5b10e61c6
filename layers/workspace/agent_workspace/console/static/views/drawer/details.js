// The task's particulars, after the timeline: who it is for, when it was made and changed, priority, labels,
// project, epic, cycle, parent, due date, cron schedule, the agent's claim, archiving; and the task's own files.
// Rows are kept by name and their text set only when it changed.

import * as store from "../../core/store.js";
import * as router from "../../core/router.js";
import { el, fragment, reconcile, replaceIfChanged, setText } from "../../core/dom.js";
import { PRIORITY_NAMES, STATUS_NAMES, assigneeName, exact, timeEl } from "../../core/format.js";
import { fileList } from "./files.js";

let facts = null;
let files = null;

export function mountDetails() {
  const section = el("section", { className: "task-details", "aria-label": "Details" });
  section.append(
    fragment(`
      <h3>Details</h3>
      <dl class="facts task-facts"></dl>`),
  );
  facts = section.querySelector("dl");
  return section;
}

/** The task's own files (a message's files are in the timeline), shown after its links. */
export function mountFiles() {
  files = el("section", { className: "task-files", "aria-label": "Task files" });
  return files;
}

export function clearDetails() {
  facts.replaceChildren();
  files.replaceChildren();
  delete files.dataset.sig;
}

/** A project's or an epic's title, from the board's context (GET …/board, kept in the store by the board). */
function headingTitle(kind, id) {
  const board = store.get("board");
  const found = board && Array.isArray(board[kind]) ? board[kind].find((h) => h.id === id) : null;
  return found ? found.title : id;
}

function cycleTitle(id) {
  const cycles = store.get("cycles") || [];
  const found = cycles.find((c) => c.id === id);
  return found ? found.title : id;
}

/** [name, value] rows; a value is text, or a time (relative, exact on hover) given as {time: iso}. */
function rows(task) {
  const out = [];
  out.push(["Status", STATUS_NAMES[task.status] || task.status], ["Assignee", assigneeName(task)]);
  if (task.createdBy) out.push(["Created by", task.createdBy === "human" ? "You" : "Agent"]);
  out.push(["Created", { time: task.createdAt }], ["Updated", { time: task.updatedAt }]);
  if (task.priority) out.push(["Priority", PRIORITY_NAMES[task.priority] || task.priority]);
  if (task.complexity) out.push(["Complexity", String(task.complexity)]);
  if (Array.isArray(task.labels) && task.labels.length) out.push(["Labels", task.labels.join(", ")]);
  if (task.projectId) out.push(["Project", headingTitle("projects", task.projectId)]);
  if (task.epicId) out.push(["Epic", headingTitle("epics", task.epicId)]);
  if (task.cycleId) out.push(["Cycle", cycleTitle(task.cycleId)]);
  if (task.parentId) out.push(["Parent", { task: task.parentId }]);
  if (task.dueDate) out.push(["Due", task.dueDate]);
  if (task.cronSchedule) out.push(["Cron", `${task.cronSchedule}${task.timezone ? ` (${task.timezone})` : ""}`]);
  if (task.claim) out.push(["Claimed", { time: task.claim.claimedAt }]);
  if (task.claim && task.claim.leaseExpiresAt) out.push(["Claim lease until", { time: task.claim.leaseExpiresAt }]);
  if (task.archived) out.push(["Archived", `${exact(task.archived.at)}: ${task.archived.reason}`]);
  return out;
}

export function renderDetails(task) {
  reconcile(
    facts,
    rows(task),
    ([name]) => name,
    ([name, value]) => {
      const row = el("div", { className: "fact" }, el("dt", { text: name }), el("dd"));
      fill(row.lastChild, value);
      return row;
    },
    (row, [, value]) => fill(row.lastChild, value),
  );
  const attached = Array.isArray(task.attachments) ? task.attachments : [];
  const signature = attached.map((a) => `${a.id}|${a.size}`).join("\n");
  replaceIfChanged(
    files,
    attached.length ? [el("h3", { text: "Files" }), fileList(task.id, attached, "Task files")] : [],
    `${task.id}\n${signature}`,
  );
}

// A value shown in a <dd>: text, a time, or a task to open. Rebuilt only when what it says changed.
function fill(dd, value) {
  if (typeof value === "string") {
    delete dd.dataset.sig;
    setText(dd, value);
  } else if (value.time !== undefined) {
    replaceIfChanged(dd, [timeEl(value.time)], `time:${value.time}`);
  } else if (value.task) {
    const label = store.taskLabel(value.task);
    const link = el("a", { href: router.href({ view: "task", id: store.taskIdentifier(value.task) || value.task }) });
    link.textContent = label;
    replaceIfChanged(dd, [link], `task:${value.task}:${label}`);
  }
}
