// Settings › Notifications (issue 21): where the human hears that an agent waits for them (e-mail, Slack, this
// browser), about what, and when not (quiet hours); and muting the workspace in view.
//
// Account-wide settings change rarely and a form being filled in must never be replaced, so they are read when
// Settings is shown (unless the human has started editing) and after each save, never in the refresh round.
// The Slack URL is a secret: the server only says whether one is set, and the field stays empty unless the
// human types a new one.

import * as store from "../../core/store.js";
import { ApiError, seg } from "../../core/api.js";
import { $, el, fragment, setText } from "../../core/dom.js";
import { announce, clearError, done, showError } from "../../core/feedback.js";

const TRIGGERS = [
  ["question", "An agent asks a question"],
  ["blocker", "A task is blocked on me"],
  ["siteCall", "A site-tool call needs approval"],
  ["toolApproval", "Claude Code asks to use a tool"],
  ["humanTask", "An agent hands me a task"],
  ["review", "A delivery waits for review"],
  ["failedRun", "A cron run or event failed"],
];

const MARKUP = `
  <form id="notify-form" novalidate>
    <p class="hint">Hear by e-mail or in Slack when an agent waits for you; answer simple questions and approvals
      from the message.</p>
    <label for="notify-email">E-mail address</label>
    <input id="notify-email" type="email" autocomplete="email" maxlength="254" aria-describedby="notify-email-state">
    <p class="meta" id="notify-email-state"></p>
    <label for="notify-slack">Slack webhook URL</label>
    <input id="notify-slack" type="url" spellcheck="false" placeholder="https://hooks.slack.com/services/…"
      aria-describedby="notify-slack-state">
    <p class="meta" id="notify-slack-state"></p>
    <button type="button" id="notify-slack-remove" class="secondary" hidden>Remove the Slack webhook</button>
    <fieldset id="notify-triggers" class="plain">
      <legend>Tell me when</legend>
    </fieldset>
    <div class="check">
      <input id="notify-quiet" type="checkbox">
      <label for="notify-quiet">Quiet hours</label>
    </div>
    <div id="notify-quiet-fields" class="row" hidden>
      <div class="field">
        <label for="notify-quiet-start">From</label>
        <input id="notify-quiet-start" type="time">
      </div>
      <div class="field">
        <label for="notify-quiet-end">Until</label>
        <input id="notify-quiet-end" type="time">
      </div>
      <div class="field grow">
        <label for="notify-quiet-zone">Time zone</label>
        <input id="notify-quiet-zone" type="text" maxlength="64" spellcheck="false">
      </div>
    </div>
    <div class="actions">
      <button type="submit" id="notify-save">Save notification settings</button>
      <button type="button" id="notify-push" class="secondary" hidden>Show notifications in this browser</button>
    </div>
  </form>
  <div class="check sub" id="notify-mute-row" hidden>
    <input id="notify-mute" type="checkbox">
    <label for="notify-mute">Mute this workspace</label>
  </div>`;

let root = null;
let savedEmail = null; // sent again only when changed: each new address gets one confirmation mail
let dirty = false; // the human changed the form since it was read: a read must not replace their edits
let loaded = false;

function fromBase64Url(text) {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

// Web Push: this browser subscribes with the stack's VAPID key; the server keeps the subscription.
async function subscribe() {
  const button = $("notify-push");
  button.disabled = true;
  try {
    if ((await Notification.requestPermission()) !== "granted") {
      announce("The browser did not allow notifications for this page.");
      return;
    }
    const registration = await navigator.serviceWorker.register("/sw.js");
    await navigator.serviceWorker.ready;
    const { publicKey } = await store.api("GET", "/api/notifications/push-key");
    const subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: fromBase64Url(publicKey),
    });
    await store.api("POST", "/api/notifications/push-subscriptions", subscription.toJSON());
    clearError($("notify-form"));
    done("This browser will show notifications.");
  } catch (error) {
    showError(error, "Turning on browser notifications failed", $("notify-form"));
  } finally {
    button.disabled = false;
  }
}

function showQuiet() {
  $("notify-quiet-fields").hidden = !$("notify-quiet").checked;
}

/** Read the account's settings (and the workspace's mute) into the form. */
async function load() {
  const form = $("notify-form");
  clearError(form); // before the read: an error the human meets while it is in flight stays theirs to read
  try {
    const settings = await store.api("GET", "/api/notifications");
    fill(settings);
    await loadMute();
  } catch (error) {
    showError(error, "Loading the notification settings failed", form);
  }
}

async function loadMute() {
  const workspace = store.get("workspaceId");
  $("notify-mute-row").hidden = !workspace;
  if (!workspace) return;
  const override = await store.api("GET", `/api/workspaces/${seg(workspace)}/notifications`);
  if (store.get("workspaceId") === workspace) $("notify-mute").checked = Boolean(override.muted);
}

/** What the server says is saved; the fields follow unless the human started editing meanwhile. */
function fill(settings, { force = false } = {}) {
  savedEmail = settings.email || null;
  loaded = true;
  setText(
    $("notify-email-state"),
    !settings.email
      ? ""
      : settings.emailConfirmed
        ? "Confirmed."
        : "Unconfirmed — check your mail: nothing is sent to it until you open the link there.",
  );
  setText($("notify-slack-state"), settings.slack ? "A Slack webhook is set." : "No Slack webhook is set.");
  $("notify-slack-remove").hidden = !settings.slack;
  if (dirty && !force) return;
  dirty = false;
  $("notify-email").value = settings.email || "";
  $("notify-slack").value = "";
  const on = new Set(settings.triggers || []);
  for (const [value] of TRIGGERS) $(`notify-trigger-${value}`).checked = on.has(value);
  const quiet = settings.quietHours;
  $("notify-quiet").checked = Boolean(quiet);
  $("notify-quiet-start").value = quiet ? quiet.start : "22:00";
  $("notify-quiet-end").value = quiet ? quiet.end : "07:00";
  $("notify-quiet-zone").value = quiet ? quiet.timeZone : Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  showQuiet();
}

function formChanges() {
  const email = $("notify-email").value.trim() || null;
  const changes = {
    triggers: TRIGGERS.map(([value]) => value).filter((value) => $(`notify-trigger-${value}`).checked),
    quietHours: $("notify-quiet").checked
      ? {
          start: $("notify-quiet-start").value,
          end: $("notify-quiet-end").value,
          timeZone: $("notify-quiet-zone").value.trim(),
        }
      : null,
  };
  const slack = $("notify-slack").value.trim();
  if (slack) changes.slackWebhookUrl = slack; // left empty: the one set stays
  if (email !== savedEmail) changes.email = email;
  return changes;
}

async function save(only) {
  const button = $("notify-save");
  const form = $("notify-form");
  button.disabled = true;
  try {
    const saved = await store.api("PATCH", "/api/notifications", only || formChanges());
    fill(saved, { force: !only }); // saved from the form: it is what the server now holds
    clearError(form);
    done("The notification settings are saved.");
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      dirty = false; // changed elsewhere: read it again (the refusal below says why the edits were dropped)
      await load();
    }
    showError(error, "Saving the notification settings failed", form);
  } finally {
    button.disabled = false;
  }
}

async function mute(on) {
  const workspace = store.get("workspaceId");
  if (!workspace) return;
  const box = $("notify-mute-row");
  const checkbox = $("notify-mute");
  checkbox.disabled = true; // one change at a time: each reads, then writes, the whole override
  try {
    // PUT replaces the workspace's whole override (api/notifications.py): read it first and send its triggers back
    // as they are (set over the API, the console does not edit them), so muting changes only `muted`.
    const path = `/api/workspaces/${seg(workspace)}/notifications`;
    const override = await store.api("GET", path);
    const triggers = Array.isArray(override.triggers) ? override.triggers : null;
    await store.api("PUT", path, { muted: on, triggers });
    clearError(box);
    done(on ? "This workspace is muted." : "This workspace notifies you again.");
  } catch (error) {
    checkbox.checked = !on;
    showError(error, "Muting the workspace failed", box);
  } finally {
    checkbox.disabled = false;
  }
}

export const notificationsSection = {
  id: "notifications",
  title: "Notifications",
  workspace: false,
  mount(box) {
    root = box;
    box.append(fragment(MARKUP));
    const triggers = $("notify-triggers");
    for (const [value, label] of TRIGGERS) {
      const id = `notify-trigger-${value}`;
      const box = el("input", { id, type: "checkbox", value });
      triggers.append(el("div", { className: "check" }, box, el("label", { htmlFor: id, text: label })));
    }
    const form = $("notify-form");
    form.addEventListener("input", () => {
      dirty = true;
    });
    form.addEventListener("change", () => {
      dirty = true;
    });
    $("notify-quiet").addEventListener("change", showQuiet);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      save();
    });
    $("notify-slack-remove").addEventListener("click", () => save({ slackWebhookUrl: null }));
    $("notify-mute").addEventListener("change", () => mute($("notify-mute").checked));
    const push = $("notify-push");
    push.hidden = !("serviceWorker" in navigator && "PushManager" in window && window.isSecureContext);
    push.addEventListener("click", subscribe);
  },
  enter() {
    if (!dirty) load();
    else loadMute().catch((error) => showError(error, "Reading the workspace's mute failed", $("notify-mute-row")));
  },
  switched() {
    if (!root.closest("[hidden]") && loaded) {
      loadMute().catch((error) => showError(error, "Reading the workspace's mute failed", $("notify-mute-row")));
    } else {
      $("notify-mute-row").hidden = !store.get("workspaceId");
    }
  },
  reset() {
    $("notify-form").reset();
    clearError($("notify-form"));
    savedEmail = null;
    dirty = false;
    loaded = false;
    setText($("notify-email-state"), "");
    setText($("notify-slack-state"), "");
    $("notify-slack-remove").hidden = true;
    $("notify-mute").checked = false;
    showQuiet();
  },
};
