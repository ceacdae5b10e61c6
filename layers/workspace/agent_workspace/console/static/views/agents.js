// The Agents view: the account's agent repo (issue 18), the person's side of it.
//
// Account-wide, not per workspace: `#/agents` lists the account's agents (mine, shared with me, archived) and the
// transfers offered to it; `#/agents/<id or @handle>` opens one beside the list (views/agents/detail.js): its
// header, then one part at a time — prompt and its versions (with a line diff against the live one), profiles,
// briefs, memories, activity, sharing. Only the part on screen is read, in the console's refresh round. On a phone
// the open agent takes the screen; Back (or "Close agent", or Esc) returns to the list.
//
// What the server sends (written by agents too, so untrusted) reaches the page through textContent and attributes
// set one by one; lists are reconciled by key, so a reason being typed into a memory's "forget" field survives the
// next refresh.

import { fragment } from "../core/dom.js";
import * as list from "./agents/list.js";
import * as detail from "./agents/detail.js";
import { setHidden } from "./agents/common.js";

let root = null;

function layout() {
  const opened = detail.isOpen();
  root.classList.toggle("agent-opened", opened);
  setHidden(root.querySelector(".agents-none"), opened);
}

export const agents = {
  name: "agents",
  label: "Agents",
  icon: "A",
  account: true,
  mount(node) {
    root = node;
    const grid = fragment(`<div class="agents-layout"></div>`).firstElementChild;
    const none = fragment(`
      <section class="card agents-none" aria-label="No agent open">
        <p class="empty">Choose an agent to read its prompt, profiles, briefs and memories, or create one.</p>
      </section>`).firstElementChild;
    grid.append(list.build(), detail.build(), none);
    root.append(grid);
    layout();
  },
  enter(route) {
    if (route.id) {
      detail.openAgent(route.id, list.listedName(route.id));
      list.markOpen(route.id);
    } else if (detail.isOpen()) {
      const closed = detail.closeAgent();
      list.markOpen(null, { focusClosed: closed });
    }
    layout();
  },
  leave() {},
  async refresh(current, full) {
    const results = await Promise.allSettled([list.refresh(current), detail.refresh(current, full)]);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  },
  reset() {
    detail.reset();
    list.reset();
    layout();
  },
};
