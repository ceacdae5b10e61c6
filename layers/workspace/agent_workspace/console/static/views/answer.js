// The one way the human decides what an agent asks of them, in the inbox and in the task's drawer alike.
//
// answerFor(kind, item, options) -> an <article class="answer-card"> for one item of core/needs.js's lists:
//   kind: "permissions" | "questions" | "blockers" | "siteCalls" | "triage" | "reviews"
//   item: the item as GET …/board/needs-you (or …/permissions) lists it
//   options.inDrawer: true inside the task's drawer (no "open the task" link, the task's title not repeated)
//   options.headingLevel: the card heading's level (3 unless said)
//   options.onDecided(answer): called with the server's answer once the decision went through
// On success it marks the item decided (core/needs.js markDecided), says so (feedback.done) and kicks the
// refresh loop; on failure the error shows inside the card (feedback.showError with the card as `where`), or
// in a toast when the item is gone (409, 404: the card leaves with the refresh that follows).
//
// updateAnswer(card, item) brings a card up to date with the item as read again (the task's title, a new
// question of a blocker...) without touching what the human is typing: reconcile lists by key and call it.

import { el } from "../core/dom.js";
import { showError } from "../core/feedback.js";
import { blockerCard, questionCard } from "./answer/questions.js";
import { permissionCard, reviewCard, siteCallCard, triageCard } from "./answer/approvals.js";
import { frame } from "./answer/card.js";

export { KIND_TAGS } from "./answer/card.js";

const BUILDERS = {
  permissions: permissionCard,
  questions: questionCard,
  blockers: blockerCard,
  siteCalls: siteCallCard,
  triage: triageCard,
  reviews: reviewCard,
};

const updaters = new WeakMap(); // card -> update(item)

const reason = (error) => String((error && error.message) || error);

/** The card for one item, or a small card saying why it cannot be shown: what an agent sent must never throw out
 * of the inbox's or the drawer's render (a store listener), which would stop the other items and listeners. */
export function answerFor(kind, item, options = {}) {
  const build = BUILDERS[kind];
  if (!build) return el("article", { className: "answer-card", text: `Unknown kind of ask: ${kind}` });
  let built;
  try {
    built = build(item, options);
  } catch (error) {
    console.warn("An answer card could not be built", kind, item, error); // for whoever debugs the agent
    built = { card: frame(kind, `This request could not be shown: ${reason(error)}`, options).card, update: null };
    built.card.classList.add("answer-broken");
  }
  const { card, update } = built;
  card.dataset.kind = kind;
  card.dataset.id = item.id;
  if (update) updaters.set(card, update);
  return card;
}

/** Bring a card up to date; a failure is said inside the card, and the rest of the render goes on. */
export function updateAnswer(card, item) {
  const update = updaters.get(card);
  if (!update) return;
  try {
    update(item);
  } catch (error) {
    showError(error, "This request could not be brought up to date", card);
  }
}
