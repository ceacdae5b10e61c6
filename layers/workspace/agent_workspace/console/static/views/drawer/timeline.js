// One timeline of the task: the conversation's messages (AgentRQ's side: messages, questions, answers, site
// calls), the comments and the activity (the board's side), merged by time, oldest first, so the newest sits
// at the bottom next to the composer. Entries never change once written: each is built once and kept by key
// (a selection in one survives the refresh rounds); relative dates are kept current by the refresh loop.

import { el, fragment, nextId, outLink, reconcile } from "../../core/dom.js";
import { announce } from "../../core/feedback.js";
import { COLUMN_NAMES, LINK_NAMES, STATUS_NAMES, json, plural, timeEl, whoTitle } from "../../core/format.js";
import { markdown } from "../../core/markdown.js";
import * as store from "../../core/store.js";
import { fileList } from "./files.js";

// What each kind of entry is called on its badge.
const TYPE_NAMES = {
  message: "Message",
  question: "Question",
  answer: "Answer",
  siteCall: "Site call",
  siteCallDecision: "Site call",
  comment: "Comment",
};

const ACTIVITY_NAMES = {
  created: "created it",
  edited: "edited it",
  claimed: "claimed it",
  released: "released it",
  progress: "reported progress",
  blocker: "reported a blocker",
  unblocked: "answered the blocker and unblocked it",
  completed: "delivered it",
  approved: "approved it",
  "sent back": "sent it back",
  accepted: "accepted it",
  declined: "declined it",
  suggested: "suggested a summary or criteria",
  "suggestion accepted": "accepted a suggestion",
  "suggestion discarded": "discarded a suggestion",
  linked: "linked it",
  unlinked: "unlinked it",
  archived: "archived it",
  status: "set the status",
};

let list = null;
let empty = null;
let shownFor = null; // the task the entries are of: new entries of the same task are announced

export function mountTimeline() {
  const section = el("section", { className: "task-timeline" });
  const id = nextId("timeline-h");
  section.append(
    fragment(`
      <h3 class="timeline-h">Timeline</h3>
      <p class="empty timeline-empty" hidden>No messages, comments or activity yet.</p>
      <ol class="timeline"></ol>`),
  );
  section.querySelector("h3").id = id;
  section.setAttribute("aria-labelledby", id);
  list = section.querySelector("ol");
  list.setAttribute("aria-labelledby", id);
  empty = section.querySelector(".timeline-empty");
  return section;
}

export function clearTimeline() {
  list.replaceChildren();
  empty.hidden = true;
  shownFor = null;
}

/** The ids of other tasks the timeline names, to learn their titles before it shows them. */
export function namedTasks(detail) {
  return (detail.activity || []).map((entry) => entry.otherTaskId).filter(Boolean);
}

/** Merge and show: `messages` from GET …/tasks/{id} (all pages), `detail` from GET …/board/tasks/{id}. */
export function renderTimeline(detail, messages) {
  const entries = [
    ...messages.map((m) => ({ key: `m:${m.id}`, at: m.createdAt, order: 0, build: () => messageItem(detail.id, m) })),
    ...(detail.comments || []).map((c) => ({ key: `c:${c.id}`, at: c.at, order: 1, build: () => commentItem(c) })),
    ...(detail.activity || [])
      .filter((a) => a.what !== "comment") // the comments come from their own list
      .map((a) => ({ key: `a:${a.id}`, at: a.at, order: 2, build: () => activityItem(a) })),
  ];
  const time = (iso) => {
    const t = Date.parse(iso);
    return Number.isNaN(t) ? 0 : t;
  };
  entries.sort((a, b) => time(a.at) - time(b.at) || a.order - b.order);
  const before = new Set(Array.from(list.children, (li) => li.dataset.key));
  reconcile(list, entries, (e) => e.key, (e) => e.build());
  empty.hidden = entries.length > 0;
  if (shownFor === detail.id) announceNew(detail, entries.filter((e) => !before.has(e.key)));
  shownFor = detail.id;
}

function announceNew(detail, added) {
  const messages = added.filter((e) => e.key.startsWith("m:")).length;
  const comments = added.filter((e) => e.key.startsWith("c:")).length;
  const parts = [];
  if (messages) parts.push(plural(messages, "new message"));
  if (comments) parts.push(plural(comments, "new comment"));
  if (parts.length) announce(`${parts.join(" and ")} in ${detail.title}.`);
}

function entryHead(type, typeName, by, at) {
  return el(
    "p",
    { className: "tl-head" },
    el("span", { className: `badge tl-type type-${type}`, text: typeName }),
    " ",
    el("strong", { text: whoTitle(by) }),
    " · ",
    timeEl(at),
  );
}

/** A message of the conversation, with what its kind adds: a question's link or form, an answer's content, a
 * site call's tool and arguments, and its files. */
function messageItem(taskId, message) {
  const kind = TYPE_NAMES[message.kind] ? message.kind : "message";
  const from = message.from === "human" ? "human" : "agent";
  const type = kind === "siteCall" || kind === "siteCallDecision" ? "site-call" : kind;
  const li = el("li", { className: `tl-entry msg kind-${kind} from-${from}` });
  li.dataset.type = type;
  li.append(entryHead(type, TYPE_NAMES[kind], message.from, message.createdAt), markdown(message.text));
  if (message.kind === "question") {
    if (message.mode === "url" && message.url) li.append(el("p", {}, outLink(message.url)));
    else if (message.requestedSchema) {
      const names = Object.keys(message.requestedSchema.properties || {});
      if (names.length) li.append(el("p", { className: "meta", text: `Asks for: ${names.join(", ")}` }));
    }
  } else if (message.kind === "answer" && message.answer && message.answer.content !== undefined) {
    li.append(el("pre", { className: "json", text: json(message.answer.content) }));
  } else if (message.kind === "siteCall") {
    li.append(
      el("p", { className: "meta", text: `${message.tool} on ${message.site}` }),
      el("pre", { className: "json", text: json(message.arguments) }),
    );
  }
  if (Array.isArray(message.attachments) && message.attachments.length) {
    li.append(fileList(taskId, message.attachments, "Files of this message"));
  }
  return li;
}

function commentItem(comment) {
  const from = comment.by === "human" ? "human" : "agent";
  const li = el("li", { className: `tl-entry msg kind-comment from-${from}` });
  li.dataset.type = "comment";
  li.append(entryHead("comment", TYPE_NAMES.comment, comment.by, comment.at), markdown(comment.text));
  return li;
}

/** A line of the activity feed: who did what, and when; a blocker's questions, a progress note's text. */
function activityItem(entry) {
  const li = el("li", { className: "tl-entry tl-activity" });
  li.dataset.type = "activity";
  const actor = entry.by === "human" ? "You" : entry.by === "agent" ? "The agent" : String(entry.by);
  let what = ACTIVITY_NAMES[entry.what] || String(entry.what);
  if (entry.what === "status" && entry.status) what = `set the status to ${STATUS_NAMES[entry.status] || entry.status}`;
  if (entry.column && COLUMN_NAMES[entry.column]) what += ` (${COLUMN_NAMES[entry.column]})`;
  if ((entry.what === "linked" || entry.what === "unlinked") && entry.otherTaskId) {
    const type = LINK_NAMES[entry.type] || (entry.type || "").replace(/_/g, " ");
    what += `: ${type} ${store.taskLabel(entry.otherTaskId)}`;
  }
  li.append(
    el(
      "p",
      { className: "tl-line" },
      el("span", { className: "sr-only", text: "Activity: " }),
      el("strong", { text: actor }),
      ` ${what} · `,
      timeEl(entry.at),
    ),
  );
  if (entry.text) li.append(markdown(entry.text));
  if (Array.isArray(entry.questions) && entry.questions.length) {
    const asks = el("ol", { className: "asks" });
    for (const q of entry.questions) asks.append(el("li", { text: String(q) }));
    li.append(asks);
  }
  return li;
}
