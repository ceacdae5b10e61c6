// The open agent's profiles: settings and a prompt addendum per tool; a tool without its own takes the default.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, fragment, reconcile, setText, replaceIfChanged } from "../../core/dom.js";
import { json, timeEl } from "../../core/format.js";
import { done } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";
import { access, attempt, confirming, open, path, refs, refuse, setHidden, still } from "./common.js";

const TOOLS = ["default", "claude-code", "codex", "cursor", "claude-ai", "copilot", "gemini-cli", "windsurf", "zed",
  "other"];

const MARKUP = `
<section class="part" aria-labelledby="agent-profiles-h">
  <h3 id="agent-profiles-h">Profiles</h3>
  <p class="hint">Settings and a prompt addendum per tool; a tool without its own takes the default.</p>
  <ul class="list" aria-labelledby="agent-profiles-h" data-ref="list"></ul>
  <form class="sub agent-write" novalidate aria-labelledby="agent-profile-form-h" data-ref="form">
    <h4 id="agent-profile-form-h">Set a profile</h4>
    <label for="agent-profile-harness">Tool</label>
    <input id="agent-profile-harness" type="text" list="agent-harnesses" maxlength="40" autocomplete="off"
           spellcheck="false" data-ref="harness">
    <datalist id="agent-harnesses" data-ref="tools"></datalist>
    <label for="agent-profile-settings">Settings (a JSON object)</label>
    <textarea id="agent-profile-settings" rows="4" class="mono" spellcheck="false"
              aria-describedby="agent-profile-settings-hint" data-ref="settings"></textarea>
    <p id="agent-profile-settings-hint" class="hint">Values are text, true/false or null, e.g.
      <code>{"model": "opus"}</code>. The server names the settings each tool takes.</p>
    <label for="agent-profile-addendum">Addendum</label>
    <textarea id="agent-profile-addendum" rows="3" data-ref="addendum"></textarea>
    <button type="submit">Save profile</button>
  </form>
</section>`;

let ui = null;
let profiles = {}; // harness → the profile as last read

export const profilesPart = {
  name: "profiles",
  label: "Profiles",
  build() {
    const section = fragment(MARKUP).firstElementChild;
    ui = refs(section);
    ui.tools.append(...TOOLS.map((tool) => el("option", { value: tool })));
    ui.form.addEventListener("submit", save);
    return section;
  },
  refresh: (current, id) => refreshProfiles(current, id),
  reset() {
    profiles = {};
    ui.list.replaceChildren();
  },
};

async function refreshProfiles(current, id) {
  const data = await store.api("GET", path("/profiles"));
  if (!still(id, current)) return;
  const listed = [data.default, ...Object.values(data.profiles || {})].filter(Boolean);
  profiles = Object.fromEntries(listed.map((p) => [p.harness, p]));
  reconcile(ui.list, listed, (p) => p.harness, profileItem, updateProfileItem);
}

function profileItem(profile) {
  const li = el("li", { className: "profile" });
  const edit = el("button", { type: "button", className: "secondary small edit", text: "Edit" });
  edit.setAttribute("aria-label", `Edit the ${profile.harness} profile`);
  edit.addEventListener("click", () => editProfile(profile.harness));
  const remove = el("button", { type: "button", className: "danger small remove", text: "Delete" });
  remove.setAttribute("aria-label", `Delete the ${profile.harness} profile`);
  confirming(remove, `Delete the ${profile.harness} profile?`, "Delete profile", "Deleting the profile failed", () =>
    deleteProfile(profile.harness),
  );
  li.append(
    el("h4", { text: profile.harness === "default" ? "default (every tool without its own)" : profile.harness }),
    el("pre", { className: "json settings" }),
    el("p", { className: "text addendum" }),
    el("p", { className: "meta" }),
    el("div", { className: "actions" }, edit, remove),
  );
  updateProfileItem(li, profile);
  return li;
}

function updateProfileItem(li, profile) {
  setText(li.querySelector(".settings"), json(profile.settings || {}));
  setText(li.querySelector(".addendum"), profile.addendum ? `Addendum: ${profile.addendum}` : "No addendum.");
  const meta = li.querySelector(".meta");
  if (!profile.revision) replaceIfChanged(meta, ["not set"], "unset");
  else if (!profile.updatedAt) replaceIfChanged(meta, [`revision ${profile.revision}`], `${profile.revision}`);
  else {
    replaceIfChanged(meta, [`revision ${profile.revision} · `, timeEl(profile.updatedAt)],
      `${profile.revision} ${profile.updatedAt}`);
  }
  const canEdit = access().canEdit;
  setHidden(li.querySelector(".edit"), !canEdit);
  if (!li.querySelector(".confirm")) setHidden(li.querySelector(".remove"), !profile.revision || !canEdit);
}

function editProfile(harness) {
  const profile = profiles[harness];
  if (!profile) return;
  ui.harness.value = harness;
  ui.settings.value = json(profile.settings || {});
  ui.addendum.value = profile.addendum || "";
  ui.harness.focus();
}

async function save(event) {
  event.preventDefault();
  const harness = ui.harness.value.trim();
  if (!harness) {
    refuse("name the tool the profile is for", "Saving the profile", ui.form, ui.harness);
    return;
  }
  let settings;
  try {
    const text = ui.settings.value.trim();
    settings = text ? JSON.parse(text) : {};
    if (!settings || typeof settings !== "object" || Array.isArray(settings)) throw new Error("not an object");
  } catch {
    refuse('settings must be a JSON object, like {"model": "opus"}', "Saving the profile", ui.form, ui.settings);
    return;
  }
  const body = { settings, addendum: ui.addendum.value };
  const known = profiles[harness];
  if (known && known.revision) body.expectedRevision = known.revision;
  const id = open.id;
  await attempt("Saving the profile failed", ui.form, event.submitter, async () => {
    const saved = await store.api("PUT", path(`/profiles/${seg(harness)}`), body);
    if (open.id !== id) return;
    ui.form.reset();
    done(`Profile for ${saved.harness} saved (revision ${saved.revision}).`);
    await refreshProfiles(null, id);
    kick();
  });
}

async function deleteProfile(harness) {
  const id = open.id;
  await store.api("DELETE", path(`/profiles/${seg(harness)}`));
  if (open.id !== id) return;
  done(`Profile for ${harness} deleted.`);
  await refreshProfiles(null, id);
}
