// Settings › How agents work here: the workspace's policy, two switches (PUT …/board/policy).
//   Supervised: agents' new top-level tasks wait in triage for the human to accept or decline.
//   Sign-off:   a delivery waits in review until the human approves it or sends it back.
//
// The policy arrives with the board's context (GET …/board, read into the store by Settings and by the board).
// A read begun before the human's last change carries the old policy: it is not shown (`readAt`, set by the
// Settings read, against `changedAt`), nor is any while a change is in flight.

import * as store from "../../core/store.js";
import { kick } from "../../core/refresh.js";
import { fragment } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";

const MARKUP = `
  <fieldset class="plain policy">
    <legend>Policy</legend>
    <div class="check">
      <input id="policy-supervised" type="checkbox" aria-describedby="policy-supervised-hint">
      <label for="policy-supervised">Supervised</label>
      <p id="policy-supervised-hint" class="hint">Agents' new top-level tasks wait in triage for you to accept or
        decline.</p>
    </div>
    <div class="check">
      <input id="policy-signoff" type="checkbox" aria-describedby="policy-signoff-hint">
      <label for="policy-signoff">Sign-off</label>
      <p id="policy-signoff-hint" class="hint">A delivery waits in review until you approve it or send it back.</p>
    </div>
  </fieldset>`;

const SWITCHES = [
  {
    field: "supervised",
    name: "Supervised",
    id: "policy-supervised",
    meaning: (on) => (on ? "agents' new tasks wait in triage for you." : "agents' new tasks go straight to ready."),
  },
  {
    field: "signOff",
    name: "Sign-off",
    id: "policy-signoff",
    meaning: (on) => (on ? "deliveries wait in review for you." : "deliveries are done at once."),
  },
];

let root = null;
let changedAt = 0; // when the human last changed the policy (ms)
let inFlight = 0; // changes sent and not answered yet

function render(policy) {
  if (!policy) return;
  for (const s of SWITCHES) {
    const box = root.querySelector(`#${s.id}`);
    box.checked = Boolean(policy[s.field]);
    box.disabled = false;
  }
}

function fromStore(board) {
  if (!board || inFlight) return;
  if (board.workspace && board.workspace.id !== store.get("workspaceId")) return; // the workspace left
  if (typeof board.readAt === "number" && board.readAt < changedAt) return; // read before the change
  render(board.policy);
}

async function change(s, checkbox) {
  const wanted = checkbox.checked;
  changedAt = performance.now();
  inFlight += 1;
  const box = root.querySelector("fieldset");
  try {
    const policy = await store.api("PUT", store.ws("/board/policy"), { [s.field]: wanted });
    changedAt = performance.now();
    inFlight -= 1;
    render(policy);
    const board = store.get("board");
    if (board) store.set("board", { ...board, policy, readAt: changedAt });
    clearError(box);
    done(`${s.name} ${wanted ? "on" : "off"}: ${s.meaning(wanted)}`);
    kick();
  } catch (error) {
    inFlight -= 1;
    checkbox.checked = !wanted;
    showError(error, `Changing the ${s.name.toLowerCase()} policy failed`, box);
  }
}

export const policySection = {
  id: "policy",
  title: "How agents work here",
  workspace: true,
  mount(box) {
    root = box;
    box.append(fragment(MARKUP));
    for (const s of SWITCHES) {
      const checkbox = root.querySelector(`#${s.id}`);
      checkbox.disabled = true; // until the policy is read: a click before it would guess
      checkbox.addEventListener("change", () => change(s, checkbox));
    }
    store.on("board", fromStore);
  },
  enter() {
    fromStore(store.get("board"));
  },
  switched() {
    this.reset();
  },
  reset() {
    changedAt = performance.now(); // a read of the old workspace still in flight is not shown
    for (const s of SWITCHES) {
      const checkbox = root.querySelector(`#${s.id}`);
      checkbox.checked = false;
      checkbox.disabled = true;
    }
    clearError(root.querySelector("fieldset"));
  },
};
