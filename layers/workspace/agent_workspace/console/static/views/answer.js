// The one way the human decides what an agent asks of them, in the inbox and in the task's drawer alike.
// (A placeholder: the inbox's engineer writes it; the drawer uses the same function.)
//
// answerFor(kind, item, options) -> an <article class="answer-card"> for one item of core/needs.js's lists:
//   kind: "permissions" | "questions" | "blockers" | "siteCalls" | "triage" | "reviews"
//   item: the item as GET …/board/needs-you (or …/permissions) lists it
//   options.inDrawer: true inside the task's drawer (no "open the task" link, the task's title not repeated)
// On success it marks the item decided (core/needs.js markDecided), says so (feedback.done) and kicks the
// refresh loop; on failure the error shows inside the card (feedback.showError with the card as `where`).

import { el } from "../core/dom.js";

export function answerFor(kind, item) {
  return el("article", { className: "answer-card", text: `${kind} ${item.id}` });
}
