// The console's notification settings (issue 21): where the human hears that an agent waits for them (e-mail,
// Slack), about what, and when not (quiet hours); and muting the workspace in view.
//
// Account-wide settings change rarely and a form being filled in must never be replaced, so they are read when
// the card opens and after each save, never in the polling round. The Slack URL is a secret: the server only
// says whether one is set, and the field stays empty unless the human types a new one.

const TRIGGERS = [
  ["question", "An agent asks a question"],
  ["blocker", "A task is blocked on me"],
  ["siteCall", "A site-tool call needs approval"],
  ["toolApproval", "Claude Code asks to use a tool"],
  ["humanTask", "An agent hands me a task"],
  ["review", "A delivery waits for review"],
  ["failedRun", "A cron run or event failed"],
];

/** The card, wired to the console's helpers (`ui`): its API client and messages. */
export function createNotifications(ui) {
  const { api, ApiError, el, seg, announce, showError, clearError, handleAuthFailure } = ui;
  const $ = (id) => document.getElementById(id);
  let revision = 0;
  let savedEmail = null; // sent again only when changed: each new address gets one confirmation mail

  function wire() {
    const box = $("notify-triggers");
    for (const [value, label] of TRIGGERS) {
      const id = `notify-trigger-${value}`;
      box.append(
        el("div", { className: "check" }, el("input", { id, type: "checkbox", value }), el("label", { htmlFor: id, text: label })),
      );
    }
    $("notify-panel").addEventListener("toggle", () => {
      if ($("notify-panel").open) load();
    });
    $("notify-quiet").addEventListener("change", () => showQuiet());
    $("notify-form").addEventListener("submit", (event) => {
      event.preventDefault();
      save();
    });
    $("notify-slack-remove").addEventListener("click", () => save({ slackWebhookUrl: null }));
    $("notify-mute").addEventListener("change", () => mute($("notify-mute").checked));
    const push = $("notify-push");
    push.hidden = !("serviceWorker" in navigator && "PushManager" in window && window.isSecureContext);
    push.addEventListener("click", () => subscribe());
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
      const { publicKey } = await api("GET", "/api/notifications/push-key");
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: fromBase64Url(publicKey),
      });
      await api("POST", "/api/notifications/push-subscriptions", subscription.toJSON());
      clearError();
      announce("This browser will show notifications.");
    } catch (error) {
      if (!handleAuthFailure(error)) showError(error, "Turning on browser notifications failed");
    } finally {
      button.disabled = false;
    }
  }

  function fromBase64Url(text) {
    const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }

  function showQuiet() {
    $("notify-quiet-fields").hidden = !$("notify-quiet").checked;
  }

  async function load() {
    try {
      const settings = await api("GET", "/api/notifications");
      fill(settings);
      const workspace = ui.workspaceId();
      $("notify-mute-row").hidden = !workspace;
      if (workspace) {
        const override = await api("GET", `/api/workspaces/${seg(workspace)}/notifications`);
        $("notify-mute").checked = Boolean(override.muted);
      }
      clearError();
    } catch (error) {
      if (!handleAuthFailure(error)) showError(error, "Loading the notification settings failed");
    }
  }

  function fill(settings) {
    revision = settings.revision;
    savedEmail = settings.email || null;
    $("notify-email").value = settings.email || "";
    $("notify-email-state").textContent = !settings.email
      ? ""
      : settings.emailConfirmed
        ? "Confirmed."
        : "Unconfirmed — check your mail: nothing is sent to it until you open the link there.";
    $("notify-slack").value = "";
    $("notify-slack-state").textContent = settings.slack ? "A Slack webhook is set." : "No Slack webhook is set.";
    $("notify-slack-remove").hidden = !settings.slack;
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
        ? { start: $("notify-quiet-start").value, end: $("notify-quiet-end").value, timeZone: $("notify-quiet-zone").value.trim() }
        : null,
    };
    const slack = $("notify-slack").value.trim();
    if (slack) changes.slackWebhookUrl = slack; // left empty: the one set stays
    if (email !== savedEmail) changes.email = email;
    return changes;
  }

  async function save(only) {
    const button = $("notify-save");
    button.disabled = true;
    try {
      const saved = await api("PATCH", "/api/notifications", only || formChanges());
      fill(saved);
      clearError();
      announce("The notification settings are saved.");
    } catch (error) {
      if (handleAuthFailure(error)) return;
      if (error instanceof ApiError && error.status === 409) await load();
      showError(error, "Saving the notification settings failed");
    } finally {
      button.disabled = false;
    }
  }

  async function mute(on) {
    const workspace = ui.workspaceId();
    if (!workspace) return;
    try {
      await api("PUT", `/api/workspaces/${seg(workspace)}/notifications`, { muted: on, triggers: null });
      announce(on ? "This workspace is muted." : "This workspace notifies you again.");
    } catch (error) {
      if (!handleAuthFailure(error)) showError(error, "Muting the workspace failed");
    }
  }

  return { wire, load, revision: () => revision };
}
