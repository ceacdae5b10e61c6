// What an agent asks the human to approve: a site-tool call (run in the human's browser), a Claude Code tool
// (through the channel bridge), a proposed task (triage, when the board is supervised) and a delivery (review,
// under sign-off). Each builder returns {card, update(item)}; `update` leaves a comment being typed alone.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, nextId, replaceIfChanged, setText } from "../../core/dom.js";
import { PRIORITY_NAMES, json, timeEl, who, whoTitle } from "../../core/format.js";
import { markdown } from "../../core/markdown.js";
import { buttonRow, commentField, decide, frame, refreshTaskLinks, refuse, taskLink } from "./card.js";

// -- a site-tool call -------------------------------------------------------------------------------

const SITE_DECISIONS = [
  ["allow_once", "Allow once", "", "Allowed once"],
  ["always_allow", "Always allow", "secondary", "Always allowed"],
  ["deny", "Deny", "danger", "Denied"],
];

export function siteCallCard(call, options) {
  const { card, meta } = frame("siteCalls", `${call.tool} on ${call.site}`, options);
  if (!options.inDrawer) meta.append("In ", taskLink(call.taskId), " · ");
  meta.append("asked ", timeEl(call.createdAt));
  const facts = el("dl", { className: "facts" },
    el("dt", { text: "Site" }), el("dd", { text: call.site }),
    el("dt", { text: "Tool" }), el("dd", { text: call.tool }));
  const argsId = nextId("args");
  card.append(
    facts,
    el("p", { id: argsId, className: "label", text: "Arguments" }),
    el("pre", { className: "json", text: json(call.arguments), "aria-labelledby": argsId }),
    buttonRow(
      SITE_DECISIONS.map(([decision, label, tone, said]) => [label, tone, () =>
        decide(card, {
          kind: "siteCalls",
          id: call.id,
          path: () => `/site-calls/${seg(call.id)}/decision`,
          body: { decision },
          context: "Deciding the site-tool call failed",
          success: `${said}: ${call.tool} on ${call.site}`,
          onDecided: options.onDecided,
        })]),
    ),
  );
  return { card, update: () => refreshTaskLinks(card) };
}

// -- a Claude Code tool permission (issue 19) --------------------------------------------------------

// A request blocks Claude Code until it is answered, and expires after 10 minutes.
const PERMISSION_DECISIONS = [
  ["allow", "Allow", "", "Allowed"],
  ["deny", "Deny", "danger", "Denied"],
  ["always", "Always allow", "secondary", "Always allowed"],
];

export function permissionCard(request, options) {
  const { card, meta } = frame("permissions", request.toolName, options);
  meta.append("Asked ", timeEl(request.createdAt), " · expires ", timeEl(request.expiresAt));
  if (request.taskId && !options.inDrawer) meta.append(" · in ", taskLink(request.taskId));
  if (request.description) card.append(el("p", { className: "text", text: request.description }));
  if (request.inputPreview) {
    const inputId = nextId("perm-input");
    card.append(
      el("p", { id: inputId, className: "label", text: "Input" }),
      el("pre", { className: "doc", text: request.inputPreview, "aria-labelledby": inputId }),
    );
  }
  card.append(
    buttonRow(
      PERMISSION_DECISIONS.map(([decision, label, tone, said]) => [label, tone, () =>
        decide(card, {
          kind: "permissions",
          id: request.id,
          path: () => `/permissions/${seg(request.id)}`,
          body: { decision },
          context: `Answering Claude Code's request to use ${request.toolName} failed`,
          success: `${said}: ${request.toolName}${decision === "always" ? " (in this workspace, from now on)" : ""}`,
          onDecided: options.onDecided,
        }),
      decision === "always" ? { title: `Allow ${request.toolName} now and from now on in this workspace` } : {}]),
    ),
  );
  return { card, update: () => refreshTaskLinks(card) };
}

// -- a proposal to triage, a delivery to review -------------------------------------------------------

const TASK_DECIDED = {
  backlog: "accepted into the backlog.",
  ready: "accepted: the task is ready.",
  decline: "declined: the task is rejected.",
  approve: "approved: the task is done.",
  send_back: "sent back: the task is ready again, with your comment.",
};

/** The frame of a task's card: its title (a link to the task, or, in its own drawer, what is asked). */
function taskFrame(kind, task, options, drawerHeading) {
  const heading = options.inDrawer ? drawerHeading : taskLink(task.id, task.title);
  if (!options.inDrawer) heading.dataset.fixedText = "title";
  const framed = frame(kind, heading, options);
  framed.setTitle = (title) => {
    if (!options.inDrawer) setText(framed.heading.querySelector("a"), title);
  };
  return framed;
}

function decideTask(card, kind, task, decision, label, comment, options) {
  const text = comment.value.trim();
  if (decision === "send_back" && !text) {
    refuse(card, "say what is missing in the decision comment: it goes back with the task", "Sending the task back",
      comment);
    return;
  }
  const body = { decision };
  if (text) body.comment = text;
  decide(card, {
    kind: kind === "triage" ? "triage" : "reviews",
    id: task.id,
    path: () => `/board/tasks/${seg(task.id)}/${kind}`,
    body,
    context: `${label} failed`,
    success: (answer) => {
      const name = (answer && answer.identifier) || task.identifier || task.title;
      return `${name}: ${TASK_DECIDED[decision]}`;
    },
    onDecided: options.onDecided,
  });
}

export function triageCard(task, options) {
  const proposer = who(task.createdBy);
  const asked = `Proposed by ${proposer}: accept it or decline it`;
  const { card, meta, setTitle } = taskFrame("triage", task, options, asked);
  const about = el("div", { className: "answer-text" });
  const comment = commentField("Decision comment (optional)");
  card.append(
    about,
    comment.node,
    buttonRow(
      [["backlog", "Accept to backlog", ""], ["ready", "Accept to ready", ""], ["decline", "Decline", "danger"]].map(
        ([decision, label, tone]) => [label, tone, () =>
          decideTask(card, "triage", task, decision, label, comment.field, options)],
      ),
    ),
  );
  const update = (next) => {
    store.learnTask(next);
    setTitle(next.title);
    const priority = next.priority && next.priority !== "none" ? PRIORITY_NAMES[next.priority] : "";
    const head = [next.identifier, priority, `proposed by ${who(next.createdBy)}`].filter(Boolean).join(" · ");
    replaceIfChanged(meta, [head, " · ", timeEl(next.createdAt)], `${head}|${next.createdAt}`);
    const criteria = Array.isArray(next.criteria) ? next.criteria : [];
    replaceIfChanged(about, () => [
      next.body ? markdown(next.body) : el("p", { className: "hint", text: "No description." }),
      criteria.length ? criteriaList(criteria, false) : null,
    ].filter(Boolean), JSON.stringify([next.body, criteria])); // markdown parsed only when the text changed
  };
  update(task);
  return { card, update };
}

export function reviewCard(task, options) {
  const { card, meta, setTitle } = taskFrame("reviews", task, options, "Delivered: approve it or send it back");
  const about = el("div", { className: "answer-text" });
  const comment = commentField("Decision comment (required to send back)");
  card.append(
    about,
    comment.node,
    buttonRow(
      [["approve", "Approve", ""], ["send_back", "Send back", "danger"]].map(([decision, label, tone]) => [label, tone,
        () => decideTask(card, "review", task, decision, label, comment.field, options)]),
    ),
  );
  const update = (next) => {
    store.learnTask(next);
    setTitle(next.title);
    const delivery = next.delivery || {};
    const by = delivery.by ? `delivered by ${who(delivery.by)}` : "delivered";
    const head = [next.identifier, by].filter(Boolean).join(" · ");
    const at = delivery.at || next.updatedAt;
    replaceIfChanged(meta, [head, " ", timeEl(at)], `${head}|${at}`);
    const criteria = Array.isArray(next.criteria) ? next.criteria : [];
    replaceIfChanged(about, () => [
      delivery.summary ? markdown(delivery.summary) : el("p", { className: "hint", text: "No summary." }),
      criteria.length ? criteriaList(criteria, true) : null,
    ].filter(Boolean), JSON.stringify([delivery.summary, criteria]));
  };
  update(task);
  return { card, update };
}

/** The acceptance criteria, under their label; with the delivering agent's verdict on each when `verdicts`. */
function criteriaList(criteria, verdicts) {
  const name = verdicts ? "Criteria verdicts" : "Acceptance criteria";
  const labelId = nextId("criteria");
  const list = el("ul", { className: "criteria", "aria-labelledby": labelId });
  for (const criterion of criteria) {
    const li = el("li");
    if (verdicts) {
      const [tone, text] = criterion.met === true ? ["met", "Met"] : criterion.met === false ? ["unmet", "Not met"]
        : ["open", "No verdict"];
      li.append(el("span", { className: `badge ${tone}`, text }), " ");
    }
    li.append(String(criterion.text));
    if (verdicts && criterion.note) li.append(el("span", { className: "meta" }, ` · ${whoTitle("agent")}: `,
      String(criterion.note)));
    list.append(li);
  }
  return el("div", {}, el("p", { id: labelId, className: "label", text: name }), list);
}
