// What the Agents view's parts share: the agent open in it, what the person may do with it, and how a change the
// person asked for runs (its error inline where they are looking, its button disabled meanwhile).
//
// Each part owns its markup (constant, in its module, parsed by `fragment`) and finds its own elements by
// `data-ref`; ids are left only where a label or a heading needs one, all of them prefixed `agent`.

import { ApiError, seg } from "../../core/api.js";
import { askFirst } from "../../core/confirm.js";
import { showError, clearError } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";

export const PAGE = 50; // items read per list

/** The agent open in the view: its id (as the address names it) and GET /api/agents/{id} as last read. */
export const open = { id: null, agent: null };

/** A path under the open agent's API. */
export const path = (rest = "") => `/api/agents/${seg(open.id)}${rest}`;

/** Whether answers read for agent `id` still count: it is still the open one, and (in a round) the round is. */
export const still = (id, current) => open.id === id && (!current || current());

/** Show or hide a node, leaving it alone when it already is (a refresh that changed nothing changes nothing). */
export function setHidden(node, hidden) {
  if (node.hidden !== Boolean(hidden)) node.hidden = Boolean(hidden);
}

/** A module's elements by their `data-ref` (the root's own too), read once when its markup is built. */
export function refs(root) {
  const found = {};
  for (const node of [root, ...root.querySelectorAll("[data-ref]")]) {
    if (node.dataset.ref) found[node.dataset.ref] = node;
  }
  return found;
}

/** What the person may do with the agent: the owner everything; a share reads, or edits too once accepted. */
export function access(agent = open.agent) {
  if (!agent) return { owner: false, shared: false, canEdit: false, awaiting: false, memory: false };
  const share = agent.share;
  if (share) {
    return {
      owner: false,
      shared: true,
      canEdit: share.access === "edit",
      awaiting: !share.accepted,
      memory: Boolean(share.memory),
    };
  }
  return { owner: agent.role === "owner", shared: false, canEdit: true, awaiting: false, memory: true };
}

/**
 * Run one change the person asked for, its button disabled meanwhile: the error, with the server's detail, goes
 * inline into `where` (the form or item they acted in); success clears it. A refused token is left to the refresh
 * round that follows, which signs out.
 */
export async function attempt(context, where, button, work) {
  if (button) button.disabled = true;
  try {
    await work();
    if (where) clearError(where);
    return true;
  } catch (error) {
    showError(error, context, where);
    if (error instanceof ApiError && error.status === 401) kick();
    return false;
  } finally {
    if (button) button.disabled = false;
  }
}

/** Refuse what the person wrote before sending it: the reason inline, the field focused. */
export function refuse(reason, context, where, field) {
  showError(new Error(reason), context, where);
  field.focus();
}

/** A destructive button that asks first, in the page (core/confirm.js): the question (text, or a function giving
 * it at the click, to name what is deleted then), then "yes" or "Cancel". */
export function confirming(button, question, yes, context, action) {
  button.addEventListener("click", () => {
    askFirst(button, {
      question: typeof question === "function" ? question() : question,
      yes,
      act: async (sure, close, box) => {
        if (await attempt(context, box, sure, action)) close();
      },
    });
  });
}

/** Drop every open question ("Delete …?") inside `root`, its button back. */
export function dropConfirms(root) {
  for (const box of root.querySelectorAll(".confirm")) {
    if (box.previousElementSibling) box.previousElementSibling.hidden = false;
    box.remove();
  }
}
