// What an agent asks the human in words: a question (an MCP elicitation: a form, one-click choices, or a link
// to open) and a blocker (the questions it reported when it blocked its task, answered all at once, which
// unblocks the task). Each builder returns {card, update(item)}: `update` refreshes what the card shows
// without touching what the human is typing.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, nextId, outLink, replaceIfChanged, setText } from "../../core/dom.js";
import { plural, timeEl } from "../../core/format.js";
import { buttonRow, commentField, decide, focusNamed, frame, refreshTaskLinks, refuse, taskLink } from "./card.js";
import { oneClick, schemaFields } from "./schema-form.js";

const ANSWERED = { accept: "Answer sent", decline: "Declined", cancel: "Cancelled" };

// -- a question (elicitation) ---------------------------------------------------------------------

export function questionCard(question, options) {
  const { card, meta } = frame("questions", question.message, options);
  if (!options.inDrawer) meta.append("In ", taskLink(question.taskId), " · ");
  meta.append("asked ", timeEl(question.createdAt), " · expires ", timeEl(question.expiresAt));

  const answer = (body) =>
    decide(card, {
      onFailed: (error) => focusNamed(error, /content\.([^\s:]+)/, (name) =>
        card.querySelector(`[data-field="${CSS.escape(name)}"]`)),
      kind: "questions",
      id: question.id,
      path: () => `/elicitations/${seg(question.id)}/answer`,
      body,
      context: "Answering the question failed",
      success: `${ANSWERED[body.action]}: ${question.message}`,
      onDecided: options.onDecided,
    });
  const declineCancel = [
    ["Decline", "secondary", () => answer({ action: "decline" })],
    ["Cancel", "secondary", () => answer({ action: "cancel" })],
  ];

  if (question.mode === "url") {
    card.append(urlAnswer(question, answer, declineCancel));
  } else {
    const single = oneClick(question.requestedSchema);
    card.append(single ? choiceAnswer(question, single, answer, declineCancel) : formAnswer(question, answer,
      declineCancel));
  }
  return { card, update: () => refreshTaskLinks(card) };
}

/** A link the agent wants the human to open (to sign in somewhere, to approve elsewhere), then "Done". */
function urlAnswer(question, answer, declineCancel) {
  const box = el("div", { className: "answer-body" });
  const link = outLink(question.url, `Open ${question.url}`);
  box.append(
    el("p", {}, link),
    el("p", { className: "hint", text: "Open the link, do what it asks, then say you are done." }),
    buttonRow([["Done", "", () => answer({ action: "accept" })], ...declineCancel]),
  );
  return box;
}

/** One choice asked for: a button per choice, which answers at once. */
function choiceAnswer(question, single, answer, declineCancel) {
  const box = el("div", { className: "answer-body" });
  const groupLabel = nextId("choice");
  const group = el("div", { className: "actions choices", role: "group", "aria-labelledby": groupLabel });
  box.append(el("p", { id: groupLabel, className: "label", text: single.title }));
  if (single.description) box.append(el("p", { className: "hint", text: single.description }));
  for (const [value, text] of single.choices) {
    const button = el("button", { type: "button", className: "choice", text });
    button.addEventListener("click", () => answer({ action: "accept", content: { [single.name]: value } }));
    group.append(button);
  }
  box.append(group, buttonRow(declineCancel));
  return box;
}

/** The form for the question's requestedSchema; the browser checks what it can (required, min, max, lengths). */
function formAnswer(question, answer, declineCancel) {
  const form = el("form", { className: "answer-body answer-form" });
  form.setAttribute("aria-label", `Answer: ${question.message}`);
  const fields = schemaFields(question.requestedSchema);
  const actions = buttonRow(declineCancel);
  actions.prepend(el("button", { type: "submit", text: "Submit answer" }));
  form.append(...fields.nodes, actions);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    answer({ action: "accept", content: fields.read() });
  });
  return form;
}

// -- a blocker ------------------------------------------------------------------------------------

const blockerSignature = (task) => JSON.stringify(task.questions || []);

export function blockerCard(task, options) {
  const heading = options.inDrawer ? "The agent is blocked and asks you" : taskLink(task.id, task.title);
  if (!options.inDrawer) heading.dataset.fixedText = "title";
  const { card, meta, heading: title } = frame("blockers", heading, options);
  const body = el("div", { className: "answer-body" });
  card.append(body);
  let shown = null; // the questions the form was built for

  const update = (next) => {
    store.learnTask(next);
    if (!options.inDrawer) setText(title.querySelector("a"), next.title);
    refreshTaskLinks(card);
    const asks = next.questions || [];
    replaceIfChanged(meta, [
      next.identifier ? `${next.identifier} · ` : "",
      asks.length ? plural(asks.length, "question") : "no question",
      " for you · blocked ",
      timeEl(next.updatedAt),
    ].filter(Boolean), `${next.identifier}|${asks.length}|${next.updatedAt}`);
    // New questions (the agent blocked again, asking other things) make the answers typed so far meaningless.
    if (shown !== blockerSignature(next)) {
      shown = blockerSignature(next);
      body.replaceChildren(blockerForm(card, next, options));
    }
  };
  update(task);
  return { card, update };
}

/** One answer per question, and an optional comment: sending them moves the task back to in progress. */
function blockerForm(card, task, options) {
  const asks = Array.isArray(task.questions) ? task.questions : [];
  const form = el("form", { className: "answer-form blocker-form", noValidate: true });
  form.setAttribute("aria-label", `Answer the questions of ${task.identifier || task.title}`);
  const list = el("ol", { className: "asks" });
  list.setAttribute("aria-label", `Asked in ${task.identifier || task.title}`);
  const fields = asks.map((question) => {
    const id = nextId("ask");
    const field = el("textarea", { id, rows: 2, className: "ask-answer" });
    list.append(el("li", {}, el("label", { htmlFor: id, text: String(question) }), field));
    return field;
  });
  const comment = commentField("Anything else (optional)");
  const hint = asks.length
    ? "Leave a question empty if you have no answer: the agent reads “(no answer)”. Your answers go to the task " +
      "as one comment, and the agent goes on."
    : "The agent asked nothing: say in a comment how it should go on.";
  form.append(
    asks.length ? list : null,
    comment.node,
    el("p", { className: "hint", text: hint }),
    el("div", { className: "actions" }, el("button", { type: "submit", text: "Send answers & unblock" })),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // The server's rule, said at once: at least one answer, or a comment saying how to go on.
    if (!fields.some((field) => field.value.trim()) && !comment.field.value.trim()) {
      refuse(card, "answer at least one question, or say in the comment how the agent should go on",
        "Sending the answers", fields[0] || comment.field);
      return;
    }
    const body = { answers: fields.map((field) => field.value.trim()) };
    if (comment.field.value.trim()) body.comment = comment.field.value.trim();
    decide(card, {
      kind: "blockers",
      id: task.id,
      path: () => `/board/tasks/${seg(task.id)}/unblock`,
      body,
      context: "Unblocking the task failed",
      onFailed: (error) => focusNamed(error, /answers\W?(\d+)/, (index) => fields[Number(index)]),
      success: (answer) => `${(answer && answer.identifier) || task.identifier || task.title}: unblocked, the agent ` +
        "has your answers.",
      onDecided: options.onDecided,
    });
  });
  return form;
}
