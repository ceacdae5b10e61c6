// Files in a task: a download button per file, for the task's own files and a message's (reading the ones the
// human attaches is core/files.js).

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, safeHttpUrl } from "../../core/dom.js";
import { announce, showError } from "../../core/feedback.js";
import { formatSize } from "../../core/format.js";

/** A list of files, each a button that fetches the file's short-lived link when clicked, then opens it. */
export function fileList(taskId, attachments, label) {
  const list = el("ul", { className: "list attachments", "aria-label": label });
  for (const attachment of attachments) list.append(attachmentItem(taskId, attachment));
  return list;
}

// The link is asked for at the click, not with the task: it expires within minutes. A link to fall back on
// stays beside the button, for a browser that blocks the new tab.
function attachmentItem(taskId, attachment) {
  const li = el("li", { className: "attachment" });
  const button = el("button", {
    type: "button",
    className: "linkish",
    text: attachment.filename,
    "aria-label": `Download ${attachment.filename}`,
  });
  const size = el("span", { className: "meta", text: ` ${formatSize(attachment.size)} · ${attachment.mimeType}` });
  const fallback = el("span", { className: "fallback" });
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      // An attachment id is any string: seg() encodes it, and refuses "." and ".." (said in the item, below).
      const path = `/tasks/${seg(taskId)}/attachments/${seg(attachment.id)}?format=url`;
      const found = await store.api("GET", store.ws(path));
      const href = safeHttpUrl(found && found.url);
      if (!href) throw new Error("the server gave no download link");
      const link = el("a", { href, target: "_blank", rel: "noopener noreferrer", text: `Open ${attachment.filename}` });
      fallback.replaceChildren(" ", link);
      window.open(href, "_blank", "noopener,noreferrer");
      announce(`Download link for ${attachment.filename} opened`);
    } catch (error) {
      showError(error, `Downloading ${attachment.filename} failed`, li);
    } finally {
      button.disabled = false;
    }
  });
  li.append(button, size, fallback);
  return li;
}
