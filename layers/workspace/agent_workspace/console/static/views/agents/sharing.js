// Two parts of the open agent: its activity (what was done to it and in its sessions, by kind), and its sharing
// (the owner shares it with other accounts of this deployment, each of which accepts before it can load it; an
// account it is shared with sees from whom, and does not share it further).

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, fragment, reconcile, replaceIfChanged } from "../../core/dom.js";
import { timeEl } from "../../core/format.js";
import { done } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";
import { PAGE, access, attempt, open, path, refs, refuse, setHidden, still } from "./common.js";

// -- activity ---------------------------------------------------------------------------------------

const ACTIVITY = `
<section class="part" aria-labelledby="agent-activity-h">
  <h3 id="agent-activity-h">Activity of the agent</h3>
  <div class="row">
    <label for="agent-activity-kind">Show</label>
    <select id="agent-activity-kind" data-ref="kind">
      <option value="all">Everything</option>
      <option value="prompt">Prompt and profiles</option>
      <option value="briefs">Briefs</option>
      <option value="memory">Memory</option>
      <option value="sessions">Sessions</option>
      <option value="sharing">Sharing</option>
    </select>
  </div>
  <p class="empty" data-ref="empty" hidden>No activity yet.</p>
  <ol class="agent-activity" aria-labelledby="agent-activity-h" data-ref="list"></ol>
</section>`;

let activity = null;

export const activityPart = {
  name: "activity",
  label: "Activity",
  build() {
    const section = fragment(ACTIVITY).firstElementChild;
    activity = refs(section);
    activity.kind.addEventListener("change", () => {
      activity.list.replaceChildren(); // a filter fetches at once; the old kind's entries do not linger meanwhile
      setHidden(activity.empty, true);
      kick();
    });
    return section;
  },
  refresh: (current, id) => refreshActivity(current, id),
  reset() {
    activity.kind.value = "all";
    activity.list.replaceChildren();
    setHidden(activity.empty, true);
  },
};

async function refreshActivity(current, id) {
  const kind = activity.kind.value || "all";
  const data = await store.api("GET", path(`/activity?kind=${seg(kind)}&limit=${PAGE}`));
  if (!still(id, current) || kind !== (activity.kind.value || "all")) return;
  const items = data.items || [];
  reconcile(activity.list, items, (item) => item.id, activityItem);
  setHidden(activity.empty, items.length > 0);
}

function activityItem(item) {
  const facts = [`${item.kind} · by ${item.by}`];
  if (item.harness) facts.push(`in ${item.harness}`);
  if (item.session) facts.push(`session ${item.session}`);
  return el(
    "li",
    { className: "entry" },
    el("p", { text: item.summary }),
    el("p", { className: "meta" }, `${facts.join(" · ")} · `, timeEl(item.at)),
  );
}

// -- sharing ----------------------------------------------------------------------------------------

const SHARING = `
<section class="part" aria-labelledby="agent-shares-h">
  <h3 id="agent-shares-h" tabindex="-1" data-ref="heading">Sharing</h3>
  <p class="meta" data-ref="note" hidden></p>
  <div class="agent-owner">
    <p class="empty" data-ref="empty" hidden>Not shared with anyone.</p>
    <ul class="list" aria-label="Accounts it is shared with" data-ref="list"></ul>
    <form class="sub" novalidate aria-labelledby="agent-share-form-h" data-ref="form">
      <h4 id="agent-share-form-h">Share with another account</h4>
      <label for="agent-share-account">Account id</label>
      <input id="agent-share-account" type="text" maxlength="64" autocomplete="off" spellcheck="false"
             data-ref="account">
      <label for="agent-share-access">Access</label>
      <select id="agent-share-access" data-ref="access">
        <option value="read">Read</option>
        <option value="edit">Read and edit</option>
      </select>
      <div class="check">
        <input id="agent-share-memory" type="checkbox" data-ref="memory">
        <label for="agent-share-memory">Share its memories too</label>
      </div>
      <button type="submit">Share agent</button>
    </form>
  </div>
</section>`;

let sharing = null;

export const sharingPart = {
  name: "sharing",
  label: "Sharing",
  build() {
    const section = fragment(SHARING).firstElementChild;
    sharing = refs(section);
    sharing.form.addEventListener("submit", share);
    return section;
  },
  async refresh(current, id) {
    const who = access();
    showNote(who);
    if (who.owner) await refreshShares(current, id);
  },
  reset() {
    sharing.list.replaceChildren();
    setHidden(sharing.empty, true);
    setHidden(sharing.note, true);
    sharing.note.replaceChildren();
    delete sharing.note.dataset.sig;
  },
};

/** To an account it is shared with: by whom, how, since when. */
function showNote(who) {
  setHidden(sharing.note, who.owner || !who.shared);
  if (sharing.note.hidden) return;
  const share = open.agent.share;
  replaceIfChanged(
    sharing.note,
    [
      `Shared with you by account ${share.owner} to ${share.access}, ${share.memory ? "with" : "without"} its ` +
        "memories, ",
      timeEl(share.sharedAt),
      ". Only its owner shares it further.",
    ],
    JSON.stringify([share.owner, share.access, share.memory, share.sharedAt]),
  );
}

async function refreshShares(current, id) {
  const data = await store.api("GET", path("/shares"));
  if (!still(id, current)) return;
  const shares = data.shares || [];
  reconcile(sharing.list, shares, (s) => s.account, shareItem, updateShareItem);
  setHidden(sharing.empty, shares.length > 0);
}

function shareItem(one) {
  const li = el("li");
  const remove = el("button", { type: "button", className: "danger small", text: "Unshare" });
  remove.setAttribute("aria-label", `Stop sharing with ${one.account}`);
  remove.addEventListener("click", (event) => unshare(one.account, li, event.currentTarget));
  li.append(el("p", { className: "share-head" }), el("p", { className: "meta" }), remove);
  updateShareItem(li, one);
  return li;
}

function updateShareItem(li, one) {
  replaceIfChanged(
    li.querySelector(".share-head"),
    [
      el("strong", { text: one.account }),
      " ",
      el("span", { className: "badge", text: one.access === "edit" ? "read and edit" : "read" }),
      one.memory ? el("span", { className: "badge", text: "with memories" }) : "",
    ],
    JSON.stringify([one.account, one.access, one.memory]),
  );
  const status = one.accepted
    ? `accepted, runs version ${one.acceptedVersion}${one.follow ? " and follows new ones" : ""}`
    : "waiting for them to accept";
  replaceIfChanged(
    li.querySelector(".meta"),
    [`${status} · shared `, timeEl(one.sharedAt)],
    JSON.stringify([status, one.sharedAt]),
  );
}

async function share(event) {
  event.preventDefault();
  const account = sharing.account.value.trim();
  if (!account) {
    refuse("write the id of the account to share with", "Sharing the agent", sharing.form, sharing.account);
    return;
  }
  const body = { account, access: sharing.access.value, memory: sharing.memory.checked };
  const id = open.id;
  await attempt("Sharing the agent failed", sharing.form, event.submitter, async () => {
    await store.api("POST", path("/shares"), body);
    if (open.id !== id) return;
    sharing.form.reset();
    done(`Shared with ${account}; it waits for them to accept.`);
    await refreshShares(null, id);
  });
}

async function unshare(account, li, button) {
  const id = open.id;
  await attempt(`Unsharing with ${account} failed`, li, button, async () => {
    await store.api("DELETE", path(`/shares/${seg(account)}`));
    if (open.id !== id) return;
    done(`No longer shared with ${account}.`);
    await refreshShares(null, id);
    sharing.heading.focus();
  });
}
