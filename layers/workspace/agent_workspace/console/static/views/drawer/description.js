// What the task is: its description (markdown written by agents or the human, rendered safely), the summary,
// the acceptance criteria with the delivering agent's verdicts, and the delivery. Each part is replaced only
// when its text changed, so a selection in it survives the refresh rounds.

import { el, fragment, nextId, reconcile, replaceIfChanged, setAttr, setText } from "../../core/dom.js";
import { timeEl, who } from "../../core/format.js";
import { markdown } from "../../core/markdown.js";

let body = null;
let summary = null;
let criteria = null;
let delivery = null;

export function mountDescription() {
  const section = el("section", { className: "task-description", "aria-label": "Description" });
  section.append(
    fragment(`
      <h3 class="sr-only">Description</h3>
      <div class="task-body"></div>
      <section class="task-summary" hidden>
        <h3>Summary</h3>
        <div class="task-summary-text"></div>
      </section>
      <section class="task-criteria" hidden>
        <h3>Acceptance criteria</h3>
        <ol class="criteria"></ol>
      </section>
      <section class="task-delivery" hidden>
        <h3>Delivery</h3>
        <p class="meta task-delivery-meta"></p>
        <div class="task-delivery-text"></div>
      </section>`),
  );
  body = section.querySelector(".task-body");
  summary = section.querySelector(".task-summary");
  criteria = section.querySelector(".task-criteria");
  delivery = section.querySelector(".task-delivery");
  // Regions named by their headings: a screen reader lists them, a test finds them by name.
  for (const part of [summary, criteria, delivery]) {
    const heading = part.querySelector("h3");
    heading.id = nextId("task-part");
    part.setAttribute("aria-labelledby", heading.id);
  }
  criteria.querySelector("ol").setAttribute("aria-labelledby", criteria.querySelector("h3").id);
  return section;
}

export function clearDescription() {
  for (const node of [body, summary.querySelector("div"), delivery.querySelector("div")]) {
    node.replaceChildren();
    delete node.dataset.sig;
  }
  criteria.querySelector("ol").replaceChildren();
  summary.hidden = criteria.hidden = delivery.hidden = true;
}

export function renderDescription(task) {
  const text = task.description !== undefined ? task.description : task.body;
  // Builders, not nodes: markdown is parsed only when the text changed, not every round.
  if (text) replaceIfChanged(body, () => [markdown(text)], text);
  else replaceIfChanged(body, () => [el("p", { className: "empty", text: "No description." })], "");

  summary.hidden = !task.summary;
  replaceIfChanged(summary.querySelector("div"), () => (task.summary ? [markdown(task.summary)] : []),
    task.summary || "");

  const list = Array.isArray(task.criteria) ? task.criteria : [];
  criteria.hidden = list.length === 0;
  reconcile(
    criteria.querySelector("ol"),
    list.map((criterion, index) => ({ criterion, index })),
    ({ index }) => index,
    ({ criterion }) => criterionItem(criterion),
    (li, { criterion }) => updateCriterion(li, criterion),
  );

  const given = task.delivery;
  delivery.hidden = !given;
  const meta = delivery.querySelector(".task-delivery-meta");
  const signature = given ? `${given.by}|${given.at}` : "";
  replaceIfChanged(meta, given ? [`By ${who(given.by)} · `, timeEl(given.at)] : [], signature);
  const said = given ? given.summary || "" : "";
  replaceIfChanged(delivery.querySelector("div"), () => (said ? [markdown(said)] : []), said);
}

function criterionItem(criterion) {
  const li = el("li", { className: "criterion" });
  li.append(el("span", { className: "text" }), " ", el("span", { className: "badge" }), el("p", { className: "meta" }));
  updateCriterion(li, criterion);
  return li;
}

/** A criterion's text, and its verdict: met, not met, or not checked yet (no delivery has judged it). */
function updateCriterion(li, criterion) {
  let verdict = "not checked yet";
  let tone = "open";
  if (criterion.met === true) [verdict, tone] = ["met", "met"];
  else if (criterion.met === false) [verdict, tone] = ["not met", "unmet"];
  setText(li.querySelector(".text"), criterion.text);
  const badge = li.querySelector(".badge");
  setText(badge, verdict);
  setAttr(badge, "class", `badge ${tone}`);
  const note = li.querySelector(".meta");
  setText(note, criterion.note ? `Note: ${criterion.note}` : "");
  note.hidden = !criterion.note;
}
