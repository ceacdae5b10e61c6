// Writing in the task, under its timeline: a reply to the agent (a message of the conversation, with files:
// POST …/tasks/{id}/messages) or a comment on the board's side (POST …/board/tasks/{id}/comments). One box and
// a switch between the two, so text typed stays when the human changes their mind. The form is built once and
// never replaced by a refresh; only opening another task empties it.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, fragment, nextId } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { plural } from "../../core/format.js";
import { kick } from "../../core/refresh.js";
import { readFiles } from "../../core/files.js";

const MODES = {
  reply: { label: "Reply", send: "Send reply", hint: "The agent reads it in the task's conversation." },
  comment: { label: "Comment", send: "Post comment", hint: "A note on the board's side of the task." },
};

let form = null;
let text = null;
let label = null;
let hint = null;
let files = null;
let submit = null;
let taskId = null;
let sending = false; // a send in flight: requestSubmit (Ctrl+Enter) ignores the disabled button, this does not

export function mountComposer() {
  form = el("form", { className: "task-composer", noValidate: true, "aria-label": "Write in the task" });
  form.append(
    fragment(`
      <fieldset class="composer-mode">
        <legend class="sr-only">Write</legend>
        <label class="inline"><input type="radio" name="mode" value="reply" checked> Reply to the agent</label>
        <label class="inline"><input type="radio" name="mode" value="comment"> Comment on the task</label>
      </fieldset>
      <label class="composer-label"></label>
      <textarea class="composer-text" rows="3"></textarea>
      <p class="hint composer-hint"></p>
      <div class="composer-files">
        <label class="composer-files-label">Attach files</label>
        <input type="file" multiple>
      </div>
      <div class="actions"><button type="submit"></button></div>`),
  );
  text = form.querySelector("textarea");
  label = form.querySelector(".composer-label");
  hint = form.querySelector(".composer-hint");
  files = form.querySelector("input[type=file]");
  submit = form.querySelector("button[type=submit]");
  text.id = nextId("composer");
  label.htmlFor = text.id;
  hint.id = nextId("composer-hint");
  text.setAttribute("aria-describedby", hint.id);
  files.id = nextId("composer-files");
  form.querySelector(".composer-files-label").htmlFor = files.id;
  form.addEventListener("change", (event) => {
    if (event.target.name === "mode") showMode();
  });
  form.addEventListener("submit", send);
  // Ctrl+Enter (⌘+Enter) sends, as in most chat boxes.
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  showMode();
  return form;
}

const mode = () => (form.querySelector("input[name=mode]:checked") || {}).value || "reply";

function showMode() {
  const m = MODES[mode()];
  label.textContent = m.label;
  submit.textContent = m.send;
  hint.textContent = m.hint;
  form.querySelector(".composer-files").hidden = mode() !== "reply"; // comments carry no files
}

/** Another task is open: the box empties (what was typed was meant for the task before). */
export function showComposer(id) {
  if (taskId === id) return;
  taskId = id;
  form.reset();
  showMode();
  clearError(form);
}

export function clearComposer() {
  showComposer(null);
}

/** Focus the reply box ("r"): the mode switches to a reply. */
export function focusReply() {
  form.querySelector("input[value=reply]").checked = true;
  showMode();
  text.focus();
}

async function send(event) {
  event.preventDefault();
  const id = taskId;
  const replying = mode() === "reply";
  if (!id || sending) return;
  if (!text.value.trim() && !(replying && files.files.length)) {
    showError(new Error(replying ? "write the reply first" : "write the comment first"), MODES[mode()].send, form);
    text.focus();
    return;
  }
  sending = true;
  submit.disabled = true;
  try {
    if (replying) {
      const attachments = await readFiles(files);
      const body = { text: text.value };
      if (attachments.length) body.attachments = attachments;
      await store.api("POST", store.ws(`/tasks/${seg(id)}/messages`), body);
      done(`Reply sent${attachments.length ? ` with ${plural(attachments.length, "file")}` : ""}.`);
    } else {
      await store.api("POST", store.ws(`/board/tasks/${seg(id)}/comments`), { text: text.value });
      done("Comment posted.");
    }
    if (taskId === id) {
      text.value = "";
      files.value = "";
      clearError(form);
      text.focus();
    }
    kick();
  } catch (error) {
    showError(error, replying ? "Sending the reply failed" : "Posting the comment failed", form);
  } finally {
    sending = false;
    submit.disabled = false;
  }
}
