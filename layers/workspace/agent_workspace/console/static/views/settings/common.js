// What Settings' sections share: the lists of what the human may revoke (agent tokens, connected apps).

import { clearError, done, showError } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";

/**
 * A section's list of what the human may revoke, kept by id, with its empty sign (`empty`, said once read). A
 * listing read before a revocation answered must not bring the item back: what this page revoked is left out
 * until the server's listing no longer has it either.
 */
export function revocable(root, list, empty) {
  const revoked = new Set();
  return {
    /** The server's listing, less what this page revoked. */
    kept(all) {
      for (const id of [...revoked]) if (!all.some((item) => item.id === id)) revoked.delete(id);
      return all.filter((item) => !revoked.has(item.id));
    },

    /**
     * Revoke the item `id` (shown as `li`) with `call()`: taken off the list (focus, if it was in it, to the
     * section's heading), `said` said. A refusal shows inline in the item as `failed`, and is handed to `refused`.
     */
    async revoke(id, li, button, { call, said, failed, refused }) {
      button.disabled = true;
      try {
        await call();
        revoked.add(id);
        const hadFocus = li.contains(document.activeElement);
        li.remove();
        empty.hidden = list.children.length > 0;
        if (hadFocus) root.querySelector("h2").focus();
        clearError(root);
        done(said);
        kick();
      } catch (error) {
        button.disabled = false;
        showError(error, failed, li);
        if (refused) refused(error);
      }
    },

    /** Another workspace, or signed out: nothing listed, nothing said. */
    reset() {
      revoked.clear();
      list.replaceChildren();
      empty.hidden = true; // said once read, not before
      clearError(root);
    },
  };
}
