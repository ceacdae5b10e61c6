// The decision first: what the task asks of the human now (its questions, site calls, tool approvals, its
// blocker, triage or review; core/needs.js), each decided in place with the inbox's answer component, then the
// task's other moves (actions.js). Right under the header, so it is on the first screen.

import { asksFor } from "../../core/needs.js";
import { el, fragment, reconcile, setText } from "../../core/dom.js";
import { plural } from "../../core/format.js";
import { answerFor, updateAnswer } from "../answer.js";
import { focusHeading } from "./header.js";
import { clearActions, mountActions } from "./actions.js";

let section = null;
let heading = null;
let answers = null;
// The answer card focus was last in: its buttons are disabled while its call runs, which drops the focus to the
// page, so whether the card that leaves had focus cannot be read from activeElement then.
let focusedCard = null;

export function mountDecision() {
  section = el("section", { className: "task-decision", "aria-label": "Decision" });
  section.append(
    fragment(`
      <h3 class="decision-h" hidden>Waiting on you</h3>
      <div class="decision-answers"></div>`),
  );
  heading = section.querySelector(".decision-h");
  answers = section.querySelector(".decision-answers");
  section.append(mountActions());
  answers.addEventListener("focusin", (event) => {
    focusedCard = Array.from(answers.children).find((card) => card.contains(event.target)) || null;
  });
  answers.addEventListener("focusout", (event) => {
    if (event.relatedTarget && !answers.contains(event.relatedTarget)) focusedCard = null;
  });
  return section;
}

export function clearDecision() {
  answers.replaceChildren();
  focusedCard = null;
  heading.hidden = true;
  section.classList.remove("has-asks");
  clearActions();
}

/** What the task asks now, kept by kind and id: a card half filled in stays as it is through every refresh. */
export function renderDecision(taskId) {
  const asks = taskId ? asksFor(taskId) : [];
  reconcile(
    answers,
    asks,
    ({ kind, item }) => `${kind}:${item.id}`,
    ({ kind, item }) => answerFor(kind, item, { inDrawer: true, headingLevel: 4 }),
    (card, { item }) => updateAnswer(card, item),
  );
  heading.hidden = asks.length === 0;
  setText(heading, asks.length > 1 ? `Waiting on you (${plural(asks.length, "thing")})` : "Waiting on you");
  section.classList.toggle("has-asks", asks.length > 0);
  // A card just decided left with the focus: give it to the next card, or to the task's title.
  if (focusedCard && !focusedCard.isConnected) {
    focusedCard = null;
    const active = document.activeElement;
    if (!active || active === document.body) {
      const next = answers.firstElementChild;
      if (next) next.focus();
      else focusHeading();
    }
  }
}
