// The console's Agents view: the account's agent repo (issue 18), the person's side of it.
//
// Account-wide, not per workspace: `#/agents` lists the account's agents (mine, shared with me, archived) and
// `#/agents/<id>` opens one: its header (name, @handle, revision, lock, archive, delete), then one part at a
// time — prompt and its versions (with a line diff against the live one), profiles, briefs, memories,
// activity, sharing. Only the part on screen is polled, in the console's own polling round. An agent the person
// can load (their own, or shared and accepted, and not archived) also gets a credential minted here: an agent token
// of one of the account's workspaces, shown once, with how to connect the tool and the instruction that loads it.
//
// The same rules as app.js: what the server sends (written by agents too, so untrusted) reaches the page
// through textContent and attributes set one by one, never innerHTML; lists are reconciled by key, so a
// reason being typed into a memory's "forget" field survives the next refresh.

const TAB_EMPTY = {
  mine: "You have no agents yet: create one below.",
  shared: "No agent is shared with this account.",
  archived: "No archived agents.",
};
const PARTS = ["prompt", "profiles", "briefs", "memories", "activity", "sharing"];
const ROUTE = /^#\/agents(?:\/([^/?#]+))?\/?$/;
const DIFF_MAX_LINES = 2000; // per side: the LCS table is (n+1)×(m+1) cells
const DIFF_CONTEXT = 3; // unchanged lines kept around each change
const PAGE = 50;
const VERSIONS_KEPT = 500; // older versions loaded by "Show older versions", at most

/**
 * The line diff from `before` to `after`: [{op: " " | "-" | "+", text}], or null when either side is longer
 * than DIFF_MAX_LINES. A longest common subsequence over lines, after the common head and tail are set aside.
 */
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length > DIFF_MAX_LINES || b.length > DIFF_MAX_LINES) return null;
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const n = endA - head;
  const m = endB - head;
  const width = m + 1;
  const lcs = new Uint16Array((n + 1) * width); // lcs[i][j]: the LCS length of a[head+i..] and b[head+j..]
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i * width + j] =
        a[head + i] === b[head + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const out = a.slice(0, head).map((text) => ({ op: " ", text }));
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[head + i] === b[head + j]) {
      out.push({ op: " ", text: a[head + i] });
      i += 1;
      j += 1;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      out.push({ op: "-", text: a[head + i] });
      i += 1;
    } else {
      out.push({ op: "+", text: b[head + j] });
      j += 1;
    }
  }
  for (; i < n; i += 1) out.push({ op: "-", text: a[head + i] });
  for (; j < m; j += 1) out.push({ op: "+", text: b[head + j] });
  for (let k = endA; k < a.length; k += 1) out.push({ op: " ", text: a[k] });
  return out;
}

/** The diff's lines with long unchanged runs folded to DIFF_CONTEXT lines either side of a change. */
function folded(lines) {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.op === " ") return;
    for (let k = Math.max(0, index - DIFF_CONTEXT); k <= Math.min(lines.length - 1, index + DIFF_CONTEXT); k += 1) {
      keep[k] = true;
    }
  });
  const out = [];
  let skipped = 0;
  lines.forEach((line, index) => {
    if (keep[index]) {
      if (skipped) out.push({ op: "…", text: `${skipped} unchanged line${skipped === 1 ? "" : "s"}` });
      skipped = 0;
      out.push(line);
    } else {
      skipped += 1;
    }
  });
  if (skipped) out.push({ op: "…", text: `${skipped} unchanged line${skipped === 1 ? "" : "s"}` });
  return out;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The view, wired to the console's helpers (`ui`): its API client, DOM helpers, messages and polling. */
export function createAgents(ui) {
  const { api, ApiError, el, seg, when, timeEl, json, reconcile, nextId } = ui;
  const $ = (id) => document.getElementById(id);

  const a = {
    tab: "mine",
    listed: new Map(), // id → the agent as the current tab lists it
    id: null, // the open agent
    agent: null, // GET /api/agents/{id} of the open agent
    part: "prompt",
    base: null, // {version, body}: the prompt version the editor's text started from (its basedOn)
    live: null, // the live prompt version last seen
    versions: [],
    versionsCursor: null,
    versionsFor: null, // the live version the versions were read at
    profiles: {},
    brief: null, // the brief on screen
    briefEditing: null, // {name, revision} while the form edits a brief
    memoryQuery: "",
    memoryType: "",
  };

  const path = (rest = "") => `/api/agents/${seg(a.id)}${rest}`;
  const still = (id, current) => a.id === id && (!current || current());

  // -- what the person may do with the open agent ----------------------------------------------------

  function access(agent = a.agent) {
    const share = agent && agent.share;
    if (!agent) return { owner: false, shared: false, canEdit: false, awaiting: false, memory: false };
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

  /** Run one change the person asked for; errors go to the console's alert with the server's detail. */
  async function attempt(context, work, button) {
    if (button) button.disabled = true;
    try {
      await work();
      return true;
    } catch (error) {
      if (!ui.handleAuthFailure(error)) ui.showError(error, context);
      return false;
    } finally {
      if (button) button.disabled = false;
    }
  }

  function done(text) {
    ui.clearError();
    ui.announce(text);
  }

  /** A destructive button that asks first, in the page: the question, then "yes" or "keep". */
  function confirming(button, question, yes, context, action) {
    button.addEventListener("click", () => {
      if (button.nextElementSibling && button.nextElementSibling.classList.contains("confirm")) return;
      const box = el("div", { className: "confirm", role: "group", "aria-label": question });
      const sure = el("button", { type: "button", className: "danger", text: yes });
      const keep = el("button", { type: "button", className: "secondary", text: "Cancel" });
      const close = () => {
        box.remove();
        button.hidden = false;
      };
      sure.addEventListener("click", async () => {
        if (await attempt(context, action, sure)) close();
      });
      keep.addEventListener("click", () => {
        close();
        button.focus();
      });
      box.append(el("p", { text: question }), el("div", { className: "actions" }, sure, keep));
      button.hidden = true;
      button.after(box);
      keep.focus();
    });
  }

  // -- the list ------------------------------------------------------------------------------------

  async function refreshList(current) {
    const tab = a.tab;
    const data = await api("GET", `/api/agents?view=${seg(tab)}`);
    if (!current() || tab !== a.tab) return;
    const agents = data.agents || [];
    a.listed = new Map(agents.map((agent) => [agent.id, agent]));
    reconcile($("agents-list"), agents, (agent) => agent.id, agentItem, updateAgentItem);
    $("agents-empty").textContent = TAB_EMPTY[tab];
    $("agents-empty").hidden = agents.length > 0;
  }

  function agentItem(agent) {
    const li = el("li", { className: "agent-item" });
    const button = el("button", { type: "button", className: "linkish agent-open" });
    button.addEventListener("click", () => openAgent(li.dataset.key));
    li.append(button, el("p", { className: "meta" }), el("p", { className: "agent-desc" }));
    updateAgentItem(li, agent);
    return li;
  }

  function updateAgentItem(li, agent) {
    const button = li.querySelector(".agent-open");
    button.textContent = agent.name;
    if (agent.id === a.id) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
    const remembered = Object.values(agent.memories || {}).reduce((sum, n) => sum + n, 0);
    const facts = [`@${agent.ref}`, `prompt v${agent.promptVersion}`, plural(remembered, "memory", "memories")];
    if (agent.tools && agent.tools.length) facts.push(agent.tools.join(", "));
    if (agent.role === "shared") facts.push(`shared to ${agent.access}`);
    li.querySelector(".meta").replaceChildren(
      facts.join(" · "),
      agent.awaitingAccept ? el("span", { className: "badge ask", text: "Waiting for you to accept" }) : "",
      agent.promptLocked ? el("span", { className: "badge", text: "Prompt locked" }) : "",
    );
    li.querySelector(".agent-desc").textContent = agent.description || "";
  }

  // -- transfers offered to this account ----------------------------------------------------------------

  async function refreshOffers(current) {
    const data = await api("GET", "/api/agents/transfer-offers");
    if (!current()) return;
    const offers = data.offers || [];
    reconcile($("agents-offers-list"), offers, (offer) => offer.agent, offerItem, updateOfferItem);
    $("agents-offers").hidden = offers.length === 0;
  }

  function offerItem(offer) {
    const li = el("li", { className: "agent-item" });
    const take = el("button", { type: "button", className: "offer-accept", text: "Accept transfer" });
    const refuse = el("button", { type: "button", className: "secondary offer-decline", text: "Decline" });
    take.addEventListener("click", () => decideOffer(li, "accept", take));
    refuse.addEventListener("click", () => decideOffer(li, "decline", refuse));
    li.append(el("p", { className: "agent-offer-name" }), el("p", { className: "meta" }));
    li.append(el("div", { className: "actions" }, take, refuse));
    updateOfferItem(li, offer);
    return li;
  }

  function updateOfferItem(li, offer) {
    li.dataset.name = offer.name;
    li.querySelector(".agent-offer-name").textContent = offer.name;
    const from = `@${offer.slug} from account ${offer.owner}, offered `;
    li.querySelector(".meta").replaceChildren(from, timeEl(offer.offeredAt));
    li.querySelector(".offer-accept").setAttribute("aria-label", `Accept transfer of ${offer.name}`);
    li.querySelector(".offer-decline").setAttribute("aria-label", `Decline transfer of ${offer.name}`);
  }

  async function decideOffer(li, decision, button) {
    const id = li.dataset.key;
    const name = li.dataset.name;
    await attempt(
      decision === "accept" ? "Accepting the transfer failed" : "Declining the transfer failed",
      async () => {
        await api("POST", `/api/agents/${seg(id)}/transfer/${decision}`);
        li.remove();
        $("agents-offers").hidden = $("agents-offers-list").children.length === 0;
        done(
          decision === "accept"
            ? `${name} is yours now: its earlier shares and sessions have ended.`
            : `Declined the transfer of ${name}.`,
        );
        ui.kick();
      },
      button,
    );
  }

  function setTab(tab) {
    a.tab = tab;
    for (const button of $("agents-tabs").querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.dataset.tab === tab));
    }
    $("agents-list").replaceChildren();
    $("agents-empty").hidden = true;
    ui.kick();
  }

  async function createAgent(event) {
    event.preventDefault();
    const name = $("agent-new-name").value.trim();
    if (!name) {
      ui.showError(new Error("give the agent a name"), "Creating the agent");
      $("agent-new-name").focus();
      return;
    }
    const body = { name };
    const prompt = $("agent-new-prompt").value;
    if (prompt.trim()) body.prompt = prompt;
    const button = event.submitter || $("agent-form").querySelector("button");
    await attempt(
      "Creating the agent failed",
      async () => {
        const made = await api("POST", "/api/agents", body);
        $("agent-form").reset();
        $("agent-new").open = false;
        if (a.tab !== "mine") setTab("mine");
        done(`Agent ${made.name} created as @${made.slug}.`);
        openAgent(made.id);
      },
      button,
    );
  }

  // -- the open agent: header and the person's switches ---------------------------------------------

  function openAgent(id) {
    if (a.id !== id) resetDetail();
    a.id = id;
    for (const li of $("agents-list").children) {
      const button = li.querySelector(".agent-open");
      if (li.dataset.key === id) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
    const listed = a.listed.get(id);
    $("agent-h").textContent = listed ? listed.name : id;
    $("agent-detail").hidden = false;
    ui.setRoute(null);
    $("agent-h").focus();
    ui.kick();
  }

  function closeAgent() {
    const id = a.id;
    resetDetail();
    $("agent-detail").hidden = true;
    ui.setRoute(null);
    const back = Array.from($("agents-list").children).find((li) => li.dataset.key === id);
    if (back) back.querySelector("button").focus();
    else $("agents-h").focus();
    for (const li of $("agents-list").children) li.querySelector(".agent-open").removeAttribute("aria-current");
  }

  /** Forget everything shown of the open agent (another one opens, or none). */
  function resetDetail() {
    Object.assign(a, {
      id: null,
      agent: null,
      base: null,
      live: null,
      versions: [],
      versionsCursor: null,
      versionsFor: null,
      profiles: {},
      brief: null,
      briefEditing: null,
      memoryQuery: "",
      memoryType: "",
    });
    for (const form of $("agent-detail").querySelectorAll("form")) form.reset();
    for (const box of $("agent-detail").querySelectorAll(".confirm")) box.remove();
    for (const button of $("agent-detail").querySelectorAll("button[hidden]")) button.hidden = false;
    for (const id of ["agent-versions", "agent-diff", "agent-profiles", "agent-briefs", "agent-memories",
      "agent-forgotten", "agent-activity", "agent-shares"]) {
      $(id).replaceChildren();
    }
    for (const id of ["agent-diff-box", "agent-brief", "agent-prompt-stale", "agent-versions-more"]) $(id).hidden = true;
    $("agent-prompt").value = "";
    $("agent-credential-workspace").replaceChildren(); // filled again, from the console's workspace, when shown
    hideCredential();
    $("agent-edit").open = false;
    $("agent-brief-new").open = false;
    $("agent-brief-form-h").textContent = "New brief";
  }

  /** The open agent is gone (deleted, unshared) or never was: say so and close it. */
  function agentGone(id, error) {
    if (!(error instanceof ApiError) || error.status !== 404) return false;
    if (a.id === id) {
      closeAgent();
      ui.showError(error, "Opening the agent failed");
    }
    return true;
  }

  async function refreshAgent(current) {
    const id = a.id;
    let agent;
    try {
      agent = await api("GET", path());
    } catch (error) {
      if (current() && agentGone(id, error)) return;
      throw error;
    }
    if (!still(id, current)) return;
    if (agent.id !== id) {
      a.id = agent.id; // opened by its @handle: the address names it by id
      ui.setRoute(null);
    }
    renderAgent(agent);
  }

  function renderAgent(agent) {
    if (a.agent && agent.share === undefined && a.agent.share) agent = { ...agent, share: a.agent.share };
    a.agent = agent;
    const who = access(agent);
    const ref = who.shared ? agent.share.ref : agent.ref;
    $("agent-h").textContent = agent.name;
    const facts = [`@${ref}`, `revision ${agent.revision}`, `prompt version ${agent.promptVersion}`];
    if (agent.tools && agent.tools.length) facts.push(`profiles for ${agent.tools.join(", ")}`);
    if (agent.lastSession) {
      const tool = agent.lastSession.harness ? ` in ${agent.lastSession.harness}` : "";
      facts.push(`last session ${when(agent.lastSession.at)}${tool}`);
    }
    $("agent-meta").textContent = facts.join(" · ");
    const flags = [];
    if (who.owner) flags.push(el("span", { className: "badge", text: "Yours" }));
    if (who.shared) {
      flags.push(el("span", { className: "badge", text: `Shared with you to ${agent.share.access}` }));
      if (!who.awaiting) {
        const runs = agent.share.follow ? "follows each new version" : `runs version ${agent.share.acceptedVersion}`;
        flags.push(el("span", { className: "meta", text: ` by account ${agent.share.owner}, ${runs}` }));
      }
    }
    if (agent.promptLocked) flags.push(el("span", { className: "badge locked", text: "Prompt locked" }));
    if (agent.archived) flags.push(el("span", { className: "badge", text: "Archived" }));
    $("agent-flags").replaceChildren(...flags);
    $("agent-description").textContent = agent.description || "";
    $("agent-lock").textContent = agent.promptLocked ? "Unlock prompt" : "Lock prompt";
    $("agent-archive").textContent = agent.archived ? "Restore from archive" : "Archive agent";
    $("agent-accept-box").hidden = !who.awaiting;
    if (who.awaiting) {
      $("agent-accept-text").textContent =
        `Account ${agent.share.owner} shared this agent with you to ${agent.share.access}` +
        `${agent.share.memory ? ", with its memories" : ""}. Accept it to read it here and load it in your sessions.`;
    }
    for (const node of $("agent-detail").querySelectorAll(".agent-owner")) node.hidden = !who.owner;
    for (const node of $("agent-detail").querySelectorAll(".agent-write")) node.hidden = !who.canEdit;
    $("agent-parts-box").hidden = who.awaiting;
    const loadable = !agent.archived && (who.owner || (who.shared && !who.awaiting));
    $("agent-credential").hidden = !loadable;
    if (loadable) credentialWorkspaces();
    $("agent-prompt").readOnly = !who.canEdit;
    $("agent-prompt-lock-note").hidden = !agent.promptLocked;
    if (!$("agent-edit").open) fillEdit(agent);
  }

  function fillEdit(agent) {
    $("agent-edit-name").value = agent.name;
    $("agent-edit-description").value = agent.description || "";
    $("agent-edit-slug").value = agent.slug;
  }

  async function saveEdit(event) {
    event.preventDefault();
    const agent = a.agent;
    if (!agent) return;
    const body = {};
    const name = $("agent-edit-name").value.trim();
    const description = $("agent-edit-description").value;
    const slug = $("agent-edit-slug").value.trim();
    if (name !== agent.name) body.name = name;
    if (description !== (agent.description || "")) body.description = description;
    if (access().owner && slug !== agent.slug) body.slug = slug;
    if (!Object.keys(body).length) {
      ui.announce("Nothing to change.");
      return;
    }
    body.expectedRevision = agent.revision;
    const id = a.id;
    await attempt(
      "Saving the agent failed",
      async () => {
        const saved = await api("PATCH", path(), body);
        if (a.id !== id) return;
        a.id = saved.id;
        $("agent-edit").open = false;
        renderAgent(saved);
        done(`Saved: ${saved.name} (@${saved.slug}), revision ${saved.revision}.`);
        ui.kick();
      },
      event.submitter,
    );
  }

  function switchAction(which) {
    return async (event) => {
      const agent = a.agent;
      if (!agent) return;
      const on = which === "prompt-lock" ? !agent.promptLocked : !agent.archived;
      const id = a.id;
      await attempt(
        which === "prompt-lock" ? "Changing the prompt lock failed" : "Changing the archive failed",
        async () => {
          const changed = await api("PUT", path(`/${which}`), { on });
          if (a.id !== id) return;
          renderAgent(changed);
          if (which === "prompt-lock") {
            done(on ? "Prompt locked: no one can save a new version until it is unlocked." : "Prompt unlocked.");
          } else {
            done(on ? `${changed.name} archived: it is under Archived now.` : `${changed.name} restored from the archive.`);
          }
          ui.kick();
        },
        event.currentTarget,
      );
    };
  }

  async function deleteAgent() {
    const id = a.id;
    const name = a.agent ? a.agent.name : id;
    await api("DELETE", path());
    if (a.id === id) closeAgent();
    done(`Agent ${name} deleted, with its prompt versions, memories, briefs and shares.`);
    ui.kick();
  }

  async function accept(event) {
    event.preventDefault();
    const id = a.id;
    await attempt(
      "Accepting the agent failed",
      async () => {
        const share = await api("POST", path("/accept"), { follow: $("agent-accept-follow").checked });
        if (a.id !== id) return;
        renderAgent({ ...a.agent, share });
        done(`Accepted: you run version ${share.acceptedVersion}${share.follow ? " and follow new ones" : ""}.`);
        ui.kick();
      },
      event.submitter,
    );
  }

  // -- a credential to run the open agent in a tool --------------------------------------------------

  /** The account's workspaces, as the console's workspace switch lists them (app.js keeps it current each round);
   * the one the console is in is picked first. */
  function credentialWorkspaces() {
    const select = $("agent-credential-workspace");
    const fresh = select.options.length === 0;
    const source = $("workspace-select");
    const workspaces = Array.from(source.options)
      .filter((option) => option.value)
      .map((option) => ({ id: option.value, title: option.textContent }));
    reconcile(
      select,
      workspaces,
      (w) => w.id,
      (w) => el("option", { value: w.id, text: w.title }),
      (node, w) => {
        node.textContent = w.title;
      },
    );
    if (fresh && workspaces.some((w) => w.id === source.value)) select.value = source.value;
    $("agent-credential-none").hidden = workspaces.length > 0;
  }

  async function mintCredential(event) {
    event.preventDefault();
    const workspaceSelect = $("agent-credential-workspace");
    const toolSelect = $("agent-credential-tool");
    const workspace = workspaceSelect.value;
    if (!workspace) {
      ui.showError(new Error("the account has no workspace yet: create one first"), "Minting the credential");
      return;
    }
    const title = workspaceSelect.selectedOptions[0].textContent;
    const tool = toolSelect.selectedOptions[0].textContent;
    const id = a.id;
    await attempt(
      "Minting the credential failed",
      async () => {
        const minted = await api("POST", path("/credentials"), { workspace, harness: toolSelect.value });
        if (a.id !== id) return;
        $("agent-credential-minted-h").textContent = `Credential for ${tool} in ${title}`;
        $("agent-credential-meta").textContent = `token ${minted.tokenId} · minted ${when(minted.createdAt)}`;
        $("agent-credential-token").value = minted.agentToken;
        $("agent-credential-connect").textContent = minted.connect;
        $("agent-credential-load").textContent = minted.load;
        $("agent-credential-minted").hidden = false;
        done(`Credential minted in ${title}. Store its token now: it is shown once.`);
        $("agent-credential-minted-h").focus();
      },
      event.submitter,
    );
  }

  /** The minted token leaves the page: stored, or another agent opened. */
  function hideCredential() {
    $("agent-credential-token").value = "";
    for (const id of ["agent-credential-minted-h", "agent-credential-meta", "agent-credential-connect",
      "agent-credential-load"]) {
      $(id).textContent = "";
    }
    $("agent-credential-minted").hidden = true;
  }

  // -- the parts -----------------------------------------------------------------------------------

  function setPart(part) {
    a.part = part;
    for (const button of $("agent-parts").querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.dataset.part === part));
    }
    for (const name of PARTS) $(`agent-part-${name}`).hidden = name !== part;
    ui.kick();
  }

  async function refreshPart(current, full) {
    const who = access();
    if (!a.agent || who.awaiting) return;
    const id = a.id;
    const jobs = {
      prompt: [refreshPrompt, full || a.versionsFor !== a.agent.promptVersion ? refreshVersions : null],
      profiles: [refreshProfiles],
      briefs: [refreshBriefs],
      memories: who.memory ? [refreshMemories, refreshForgotten] : [],
      activity: [refreshActivity],
      sharing: who.owner ? [refreshShares] : [],
    }[a.part].filter(Boolean);
    $("agent-memories-closed").hidden = who.memory;
    $("agent-memories-box").hidden = !who.memory;
    $("agent-shared-note").hidden = who.owner;
    if (!who.owner && who.shared) {
      const share = a.agent.share;
      $("agent-shared-note").textContent =
        `Shared with you by account ${share.owner} to ${share.access}, ${share.memory ? "with" : "without"} its ` +
        `memories, on ${when(share.sharedAt)}. Only its owner shares it further.`;
    }
    await Promise.all(jobs.map((job) => job(current, id)));
  }

  // -- prompt, versions, diff -----------------------------------------------------------------------

  /** Read the live prompt when it changed (or `again`); `replace` drops the person's unsaved edit. */
  async function refreshPrompt(current, id, again = false, replace = false) {
    const live = a.agent.promptVersion;
    if (!again && a.live === live && a.base) return;
    let prompt = { version: 0, body: "" };
    if (live > 0) prompt = await api("GET", path("/prompt"));
    if (!still(id, current)) return;
    showPrompt(prompt, replace);
  }

  /** The live prompt: into the editor unless the person is editing an older one (then a note says so). */
  function showPrompt(prompt, replace = false) {
    const field = $("agent-prompt");
    const untouched = !a.base || field.value === a.base.body;
    a.live = prompt.version;
    $("agent-prompt-meta").textContent = prompt.version
      ? `Live version ${prompt.version} · by ${prompt.author}${prompt.tool ? ` (${prompt.tool})` : ""} · ` +
        `${when(prompt.createdAt)}${prompt.note ? ` · ${prompt.note}` : ""}`
      : "No prompt yet: the first one you save is version 1.";
    if (untouched || replace) {
      field.value = prompt.body;
      a.base = { version: prompt.version, body: field.value }; // as the textarea holds it (line ends normalised)
      $("agent-prompt-stale").hidden = true;
    } else if (a.base.version !== prompt.version) {
      $("agent-prompt-stale-text").textContent =
        `Version ${prompt.version} is live now; your edit started from version ${a.base.version}. Saving it is ` +
        "refused until you start again from the live version.";
      $("agent-prompt-stale").hidden = false;
    }
  }

  async function savePrompt(event) {
    event.preventDefault();
    if (!a.agent) return;
    const id = a.id;
    const body = { body: $("agent-prompt").value, basedOn: a.base ? a.base.version : a.agent.promptVersion };
    const note = $("agent-prompt-note").value.trim();
    if (note) body.note = note;
    await attempt(
      "Saving the prompt failed",
      async () => {
        const made = await api("POST", path("/prompt"), body);
        if (a.id !== id) return;
        a.base = { version: made.version, body: body.body };
        a.live = made.version;
        a.agent = { ...a.agent, promptVersion: made.version };
        $("agent-prompt-note").value = "";
        $("agent-prompt-stale").hidden = true;
        await Promise.all([refreshPrompt(null, id, true), refreshVersions(null, id)]);
        done(`Prompt saved: version ${made.version} is live.`);
        ui.kick();
      },
      event.submitter,
    );
  }

  async function reloadPrompt() {
    const id = a.id;
    await attempt("Reading the live prompt failed", async () => {
      await refreshPrompt(null, id, true, true);
      done(`The editor holds the live version ${a.live} now.`);
      $("agent-prompt").focus();
    });
  }

  async function refreshVersions(current, id) {
    const page = await api("GET", path(`/prompt/versions?limit=${PAGE}`));
    if (!still(id, current)) return;
    const fresh = page.versions || [];
    const oldest = fresh.length ? fresh[fresh.length - 1].version : Infinity;
    const older = a.versions.filter((v) => v.version < oldest); // kept from "Show older versions"
    a.versions = [...fresh, ...older];
    if (!older.length) a.versionsCursor = page.nextCursor;
    a.versionsFor = a.agent ? a.agent.promptVersion : null;
    renderVersions();
  }

  async function moreVersions(event) {
    const id = a.id;
    await attempt(
      "Reading older versions failed",
      async () => {
        const page = await api("GET", path(`/prompt/versions?limit=${PAGE}&cursor=${seg(a.versionsCursor)}`));
        if (a.id !== id) return;
        a.versions = [...a.versions, ...(page.versions || [])].slice(0, VERSIONS_KEPT);
        a.versionsCursor = a.versions.length < VERSIONS_KEPT ? page.nextCursor : null;
        renderVersions();
      },
      event.currentTarget,
    );
  }

  function renderVersions() {
    reconcile($("agent-versions"), a.versions, (v) => v.version, versionItem, updateVersionItem);
    $("agent-versions-empty").hidden = a.versions.length > 0;
    $("agent-versions-more").hidden = !a.versionsCursor;
  }

  function versionItem(version) {
    const li = el("li", { className: "version" });
    const compare = el("button", { type: "button", className: "secondary small", text: "Compare with live" });
    compare.setAttribute("aria-label", `Compare version ${version.version} with the live version`);
    compare.addEventListener("click", () => compareVersion(version.version));
    const restore = el("button", { type: "button", className: "secondary small restore", text: "Restore" });
    restore.setAttribute("aria-label", `Restore version ${version.version}`);
    restore.addEventListener("click", (event) => restoreVersion(version.version, event.currentTarget));
    li.append(el("p", { className: "version-head" }), el("p", { className: "meta" }),
      el("div", { className: "actions" }, compare, restore));
    updateVersionItem(li, version);
    return li;
  }

  function updateVersionItem(li, version) {
    const live = version.status === "live";
    li.querySelector(".version-head").replaceChildren(
      el("strong", { text: `Version ${version.version}` }),
      " ",
      el("span", { className: `badge${live ? " live" : ""}`, text: version.status }),
    );
    li.querySelector(".meta").replaceChildren(
      `by ${version.author}${version.tool ? ` (${version.tool})` : ""} · `,
      timeEl(version.createdAt),
      version.note ? ` · ${version.note}` : "",
    );
    li.querySelector(".actions").hidden = live;
    li.querySelector(".restore").hidden = !access().canEdit;
  }

  async function compareVersion(version) {
    const id = a.id;
    await attempt(`Comparing version ${version} failed`, async () => {
      const [old, live] = await Promise.all([
        api("GET", path(`/prompt?version=${seg(version)}`)),
        api("GET", path("/prompt")),
      ]);
      if (a.id !== id) return;
      $("agent-diff-h").textContent = `Version ${old.version} → live version ${live.version}`;
      const lines = lineDiff(old.body, live.body);
      if (!lines) {
        const count = (text) => text.split("\n").length.toLocaleString("en");
        $("agent-diff-summary").textContent =
          `Too long to compare here: version ${old.version} has ${count(old.body)} lines and version ` +
          `${live.version} ${count(live.body)}; the console compares up to ${DIFF_MAX_LINES.toLocaleString("en")} ` +
          "lines each.";
        $("agent-diff").replaceChildren();
      } else {
        const added = lines.filter((l) => l.op === "+").length;
        const removed = lines.filter((l) => l.op === "-").length;
        $("agent-diff-summary").textContent =
          added || removed ? `${plural(added, "line")} added, ${plural(removed, "line")} removed.` : "No differences.";
        $("agent-diff").replaceChildren(
          ...folded(lines).map((line) => {
            const kind = { "+": "add", "-": "del", " ": "same", "…": "skip" }[line.op];
            const mark = { "+": "+ ", "-": "- ", " ": "  ", "…": "… " }[line.op];
            return el("li", { className: `diff-${kind}`, text: `${mark}${line.text}` });
          }),
        );
      }
      $("agent-diff-box").hidden = false;
      $("agent-diff-h").focus();
      ui.clearError();
    });
  }

  async function restoreVersion(version, button) {
    const id = a.id;
    await attempt(
      `Restoring version ${version} failed`,
      async () => {
        const made = await api("POST", path(`/prompt/versions/${seg(version)}/restore`));
        if (a.id !== id) return;
        a.agent = { ...a.agent, promptVersion: made.version };
        await Promise.all([refreshPrompt(null, id, true), refreshVersions(null, id)]);
        done(`Version ${version} restored: its text is live as version ${made.version}.`);
        ui.kick();
      },
      button,
    );
  }

  // -- profiles ------------------------------------------------------------------------------------

  async function refreshProfiles(current, id) {
    const data = await api("GET", path("/profiles"));
    if (!still(id, current)) return;
    const profiles = [data.default, ...Object.values(data.profiles || {})].filter(Boolean);
    a.profiles = Object.fromEntries(profiles.map((p) => [p.harness, p]));
    reconcile($("agent-profiles"), profiles, (p) => p.harness, profileItem, updateProfileItem);
  }

  function profileItem(profile) {
    const li = el("li", { className: "profile" });
    const edit = el("button", { type: "button", className: "secondary small", text: "Edit" });
    edit.setAttribute("aria-label", `Edit the ${profile.harness} profile`);
    edit.addEventListener("click", () => editProfile(profile.harness));
    const remove = el("button", { type: "button", className: "danger small", text: "Delete" });
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
    li.querySelector(".settings").textContent = json(profile.settings || {});
    li.querySelector(".addendum").textContent = profile.addendum ? `Addendum: ${profile.addendum}` : "No addendum.";
    li.querySelector(".meta").textContent = profile.revision
      ? `revision ${profile.revision}${profile.updatedAt ? ` · ${when(profile.updatedAt)}` : ""}`
      : "not set";
    const [edit, remove] = li.querySelectorAll(".actions > button");
    edit.hidden = !access().canEdit;
    if (!li.querySelector(".confirm")) remove.hidden = !profile.revision || !access().canEdit;
  }

  function editProfile(harness) {
    const profile = a.profiles[harness];
    if (!profile) return;
    $("agent-profile-harness").value = harness;
    $("agent-profile-settings").value = json(profile.settings || {});
    $("agent-profile-addendum").value = profile.addendum || "";
    $("agent-profile-harness").focus();
  }

  async function saveProfile(event) {
    event.preventDefault();
    const harness = $("agent-profile-harness").value.trim();
    if (!harness) {
      ui.showError(new Error("name the tool the profile is for"), "Saving the profile");
      $("agent-profile-harness").focus();
      return;
    }
    let settings;
    try {
      const text = $("agent-profile-settings").value.trim();
      settings = text ? JSON.parse(text) : {};
      if (!settings || typeof settings !== "object" || Array.isArray(settings)) throw new Error("not an object");
    } catch {
      ui.showError(new Error('settings must be a JSON object, like {"model": "opus"}'), "Saving the profile");
      $("agent-profile-settings").focus();
      return;
    }
    const body = { settings, addendum: $("agent-profile-addendum").value };
    const known = a.profiles[harness];
    if (known && known.revision) body.expectedRevision = known.revision;
    const id = a.id;
    await attempt(
      "Saving the profile failed",
      async () => {
        const saved = await api("PUT", path(`/profiles/${seg(harness)}`), body);
        if (a.id !== id) return;
        $("agent-profile-form").reset();
        done(`Profile for ${saved.harness} saved (revision ${saved.revision}).`);
        await refreshProfiles(null, id);
        ui.kick();
      },
      event.submitter,
    );
  }

  async function deleteProfile(harness) {
    const id = a.id;
    await api("DELETE", path(`/profiles/${seg(harness)}`));
    if (a.id !== id) return;
    done(`Profile for ${harness} deleted.`);
    await refreshProfiles(null, id);
  }

  // -- briefs --------------------------------------------------------------------------------------

  async function refreshBriefs(current, id) {
    const data = await api("GET", path("/briefs"));
    if (!still(id, current)) return;
    const briefs = data.briefs || [];
    reconcile($("agent-briefs"), briefs, (b) => b.name, briefItem, updateBriefItem);
    $("agent-briefs-empty").hidden = briefs.length > 0;
  }

  function briefItem(brief) {
    const li = el("li");
    const button = el("button", { type: "button", className: "linkish", text: brief.name });
    button.addEventListener("click", () => openBrief(li.dataset.key));
    li.append(button, el("p", { className: "meta" }));
    updateBriefItem(li, brief);
    return li;
  }

  function updateBriefItem(li, brief) {
    const button = li.querySelector("button");
    if (a.brief && a.brief.name === brief.name) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
    li.querySelector(".meta").textContent =
      `${brief.description ? `${brief.description} · ` : ""}revision ${brief.revision} · ${when(brief.updatedAt)}`;
  }

  async function openBrief(name, keepFocus = false) {
    const id = a.id;
    await attempt(`Reading brief ${name} failed`, async () => {
      const brief = await api("GET", path(`/briefs/${seg(name)}`));
      if (a.id !== id) return;
      a.brief = brief;
      $("agent-brief-h").textContent = brief.name;
      $("agent-brief-meta").textContent =
        `${brief.description ? `${brief.description} · ` : ""}revision ${brief.revision} · by ${brief.updatedBy} · ` +
        `${when(brief.updatedAt)}`;
      $("agent-brief-body").textContent = brief.body;
      $("agent-brief-rename").reset();
      $("agent-brief").hidden = false;
      for (const li of $("agent-briefs").children) {
        const button = li.querySelector("button");
        if (li.dataset.key === brief.name) button.setAttribute("aria-current", "true");
        else button.removeAttribute("aria-current");
      }
      if (!keepFocus) $("agent-brief-h").focus();
    });
  }

  function editBrief() {
    const brief = a.brief;
    if (!brief) return;
    a.briefEditing = { name: brief.name, revision: brief.revision };
    $("agent-brief-name").value = brief.name;
    $("agent-brief-description").value = brief.description || "";
    $("agent-brief-body-input").value = brief.body;
    $("agent-brief-form-h").textContent = `Edit brief ${brief.name}`;
    $("agent-brief-new").open = true;
    $("agent-brief-body-input").focus();
  }

  async function saveBrief(event) {
    event.preventDefault();
    const name = $("agent-brief-name").value.trim();
    if (!name) {
      ui.showError(new Error("give the brief a name"), "Saving the brief");
      $("agent-brief-name").focus();
      return;
    }
    const body = { body: $("agent-brief-body-input").value, description: $("agent-brief-description").value };
    const note = $("agent-brief-note").value.trim();
    if (note) body.note = note;
    if (a.briefEditing && a.briefEditing.name === name) body.expectedRevision = a.briefEditing.revision;
    const id = a.id;
    await attempt(
      "Saving the brief failed",
      async () => {
        const saved = await api("PUT", path(`/briefs/${seg(name)}`), body);
        if (a.id !== id) return;
        $("agent-brief-form").reset();
        a.briefEditing = null;
        $("agent-brief-form-h").textContent = "New brief";
        $("agent-brief-new").open = false;
        done(`Brief ${saved.name} saved (revision ${saved.revision}).`);
        await Promise.all([refreshBriefs(null, id), openBrief(saved.name, true)]);
      },
      event.submitter,
    );
  }

  async function renameBrief(event) {
    event.preventDefault();
    const brief = a.brief;
    const newName = $("agent-brief-new-name").value.trim();
    if (!brief) return;
    if (!newName) {
      ui.showError(new Error("write the brief's new name"), "Renaming the brief");
      $("agent-brief-new-name").focus();
      return;
    }
    const id = a.id;
    await attempt(
      "Renaming the brief failed",
      async () => {
        const renamed = await api("POST", path(`/briefs/${seg(brief.name)}/rename`), { newName });
        if (a.id !== id) return;
        done(`Brief ${renamed.previousName} is now ${renamed.name}.`);
        await Promise.all([refreshBriefs(null, id), openBrief(renamed.name, true)]);
      },
      event.submitter,
    );
  }

  async function deleteBrief() {
    const brief = a.brief;
    if (!brief) return;
    const id = a.id;
    await api("DELETE", path(`/briefs/${seg(brief.name)}`));
    if (a.id !== id) return;
    a.brief = null;
    $("agent-brief").hidden = true;
    done(`Brief ${brief.name} deleted.`);
    await refreshBriefs(null, id);
    $("agent-briefs-h").focus();
  }

  // -- memories ------------------------------------------------------------------------------------

  async function refreshMemories(current, id) {
    const params = new URLSearchParams({ limit: String(PAGE), sort: "recent" });
    if (a.memoryQuery) params.set("query", a.memoryQuery);
    if (a.memoryType) params.set("type", a.memoryType);
    const data = await api("GET", path(`/memories?${params}`));
    if (!still(id, current)) return;
    const memories = data.memories || [];
    reconcile($("agent-memories"), memories, (m) => m.id, memoryItem, updateMemoryItem);
    $("agent-memories-empty").textContent = a.memoryQuery || a.memoryType ? "No memory matches." : "No memories yet.";
    $("agent-memories-empty").hidden = memories.length > 0;
    $("agent-memories-more").hidden = !data.nextCursor;
  }

  function memoryItem(memory) {
    const li = el("li", { className: "memory" });
    const pin = el("button", { type: "button", className: "secondary small pin" });
    pin.addEventListener("click", (event) => pinMemory(li.memory, event.currentTarget));
    const reasonId = nextId("forget");
    const form = el("form", { className: "row forget", noValidate: true });
    form.append(
      el("label", { htmlFor: reasonId, text: "Reason to forget" }),
      el("input", { id: reasonId, type: "text", maxLength: 500, autocomplete: "off" }),
      el("button", { type: "submit", className: "danger small", text: "Forget" }),
    );
    form.addEventListener("submit", (event) => forgetMemory(event, li.memory, form));
    li.append(
      el("h4", { className: "memory-head" }),
      el("p", { className: "meta description" }),
      el("pre", { className: "doc body" }),
      el("p", { className: "meta facts" }),
      el("div", { className: "actions" }, pin),
      form,
    );
    updateMemoryItem(li, memory);
    return li;
  }

  function updateMemoryItem(li, memory) {
    li.memory = memory;
    li.querySelector(".memory-head").replaceChildren(
      el("span", { text: memory.name }),
      " ",
      el("span", { className: "badge", text: memory.type }),
      memory.pinned ? el("span", { className: "badge pinned", text: "Pinned" }) : "",
    );
    li.querySelector(".description").textContent = memory.description || "";
    li.querySelector(".body").textContent = memory.body;
    li.querySelector(".facts").textContent =
      `revision ${memory.revision} · written by ${memory.writtenBy} · updated ${when(memory.updatedAt)}`;
    const pin = li.querySelector(".pin");
    pin.textContent = memory.pinned ? "Unpin" : "Pin";
    pin.setAttribute("aria-label", `${memory.pinned ? "Unpin" : "Pin"} ${memory.name}`);
    const form = li.querySelector(".forget");
    form.querySelector("input").setAttribute("aria-label", `Reason to forget ${memory.name}`);
    form.querySelector("button").setAttribute("aria-label", `Forget ${memory.name}`);
    for (const node of [pin, form]) node.hidden = !access().canEdit;
  }

  async function pinMemory(memory, button) {
    const id = a.id;
    await attempt(
      `${memory.pinned ? "Unpinning" : "Pinning"} ${memory.name} failed`,
      async () => {
        const changed = await api("PUT", path(`/memories/${seg(memory.name)}/pinned`), { pinned: !memory.pinned });
        if (a.id !== id) return;
        done(changed.pinned ? `${memory.name} pinned: it loads whole, before the index.` : `${memory.name} unpinned.`);
        await refreshMemories(null, id);
      },
      button,
    );
  }

  async function forgetMemory(event, memory, form) {
    event.preventDefault();
    const input = form.querySelector("input");
    const reason = input.value.trim();
    if (!reason) {
      ui.showError(new Error(`say why ${memory.name} should be forgotten`), "Forgetting the memory");
      input.focus();
      return;
    }
    const id = a.id;
    await attempt(
      `Forgetting ${memory.name} failed`,
      async () => {
        const gone = await api("POST", path(`/memories/${seg(memory.name)}/forget`), { reason });
        if (a.id !== id) return;
        done(`${memory.name} forgotten; it can be restored until ${when(gone.restorableUntil)}.`);
        await Promise.all([refreshMemories(null, id), refreshForgotten(null, id)]);
        $("agent-memories-h").focus();
      },
      event.submitter,
    );
  }

  async function refreshForgotten(current, id) {
    const data = await api("GET", path("/forgotten"));
    if (!still(id, current)) return;
    const forgotten = data.forgotten || [];
    reconcile($("agent-forgotten"), forgotten, (m) => m.id, forgottenItem, updateForgottenItem);
    $("agent-forgotten-empty").hidden = forgotten.length > 0;
  }

  function forgottenItem(memory) {
    const li = el("li");
    const restore = el("button", { type: "button", className: "secondary small", text: "Restore" });
    restore.setAttribute("aria-label", `Restore ${memory.name}`);
    restore.addEventListener("click", (event) => restoreMemory(li.memory, event.currentTarget));
    li.append(el("p", { className: "forgotten-head" }), el("p", { className: "meta" }), restore);
    updateForgottenItem(li, memory);
    return li;
  }

  function updateForgottenItem(li, memory) {
    li.memory = memory;
    li.querySelector(".forgotten-head").replaceChildren(
      el("strong", { text: memory.name }),
      " ",
      el("span", { className: "badge", text: memory.type }),
      memory.description ? ` ${memory.description}` : "",
    );
    li.querySelector(".meta").textContent =
      `forgotten ${when(memory.forgottenAt)}: ${memory.reason} · restorable until ${when(memory.restorableUntil)}`;
    li.querySelector("button").hidden = !access().canEdit;
  }

  async function restoreMemory(memory, button) {
    const id = a.id;
    await attempt(
      `Restoring ${memory.name} failed`,
      async () => {
        await api("POST", path(`/forgotten/${seg(memory.id)}/restore`));
        if (a.id !== id) return;
        done(`${memory.name} restored.`);
        await Promise.all([refreshMemories(null, id), refreshForgotten(null, id)]);
        $("agent-memories-h").focus();
      },
      button,
    );
  }

  function searchMemories(event) {
    event.preventDefault();
    a.memoryQuery = $("agent-memory-query").value.trim();
    a.memoryType = $("agent-memory-type").value;
    $("agent-memories").replaceChildren();
    ui.announce(a.memoryQuery || a.memoryType ? "Searching the memories…" : "Showing every memory…");
    ui.kick();
  }

  async function writeMemory(event) {
    event.preventDefault();
    const name = $("agent-memory-name").value.trim();
    if (!name) {
      ui.showError(new Error("give the memory a name"), "Saving the memory");
      $("agent-memory-name").focus();
      return;
    }
    const body = {
      body: $("agent-memory-body").value,
      mode: "create",
      type: $("agent-memory-new-type").value,
      description: $("agent-memory-description").value,
    };
    const id = a.id;
    await attempt(
      "Saving the memory failed",
      async () => {
        await api("PUT", path(`/memories/${seg(name)}`), body);
        if (a.id !== id) return;
        $("agent-memory-form").reset();
        $("agent-memory-new").open = false;
        done(`Memory ${name} saved.`);
        await refreshMemories(null, id);
      },
      event.submitter,
    );
  }

  // -- activity ------------------------------------------------------------------------------------

  async function refreshActivity(current, id) {
    const kind = $("agent-activity-kind").value || "all";
    const data = await api("GET", path(`/activity?kind=${seg(kind)}&limit=${PAGE}`));
    if (!still(id, current) || kind !== ($("agent-activity-kind").value || "all")) return;
    const items = data.items || [];
    reconcile($("agent-activity"), items, (item) => item.id, activityItem);
    $("agent-activity-empty").hidden = items.length > 0;
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

  // -- sharing -------------------------------------------------------------------------------------

  async function refreshShares(current, id) {
    const data = await api("GET", path("/shares"));
    if (!still(id, current)) return;
    const shares = data.shares || [];
    reconcile($("agent-shares"), shares, (s) => s.account, shareItem, updateShareItem);
    $("agent-shares-empty").hidden = shares.length > 0;
  }

  function shareItem(share) {
    const li = el("li");
    const remove = el("button", { type: "button", className: "danger small", text: "Unshare" });
    remove.setAttribute("aria-label", `Stop sharing with ${share.account}`);
    remove.addEventListener("click", (event) => unshare(share.account, event.currentTarget));
    li.append(el("p", { className: "share-head" }), el("p", { className: "meta" }), remove);
    updateShareItem(li, share);
    return li;
  }

  function updateShareItem(li, share) {
    li.querySelector(".share-head").replaceChildren(
      el("strong", { text: share.account }),
      " ",
      el("span", { className: "badge", text: share.access === "edit" ? "read and edit" : "read" }),
      share.memory ? el("span", { className: "badge", text: "with memories" }) : "",
    );
    const status = share.accepted
      ? `accepted, runs version ${share.acceptedVersion}${share.follow ? " and follows new ones" : ""}`
      : "waiting for them to accept";
    li.querySelector(".meta").textContent = `${status} · shared ${when(share.sharedAt)}`;
  }

  async function share(event) {
    event.preventDefault();
    const account = $("agent-share-account").value.trim();
    if (!account) {
      ui.showError(new Error("write the id of the account to share with"), "Sharing the agent");
      $("agent-share-account").focus();
      return;
    }
    const body = { account, access: $("agent-share-access").value, memory: $("agent-share-memory").checked };
    const id = a.id;
    await attempt(
      "Sharing the agent failed",
      async () => {
        await api("POST", path("/shares"), body);
        if (a.id !== id) return;
        $("agent-share-form").reset();
        done(`Shared with ${account}; it waits for them to accept.`);
        await refreshShares(null, id);
      },
      event.submitter,
    );
  }

  async function unshare(account, button) {
    const id = a.id;
    await attempt(
      `Unsharing with ${account} failed`,
      async () => {
        await api("DELETE", path(`/shares/${seg(account)}`));
        if (a.id !== id) return;
        done(`No longer shared with ${account}.`);
        await refreshShares(null, id);
        $("agent-shares-h").focus();
      },
      button,
    );
  }

  // -- what the console calls ------------------------------------------------------------------------

  /** One polling round's share: the list, and the open agent's header and visible part. */
  async function refresh(current, full) {
    const jobs = [refreshList(current), refreshOffers(current)];
    if (a.id) {
      jobs.push(
        refreshAgent(current).then(() => (a.id && current() ? refreshPart(current, full) : undefined)),
      );
    }
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  function routeFromHash() {
    const match = ROUTE.exec(window.location.hash);
    if (!match) return null;
    try {
      return { agentId: match[1] ? decodeURIComponent(match[1]) : null };
    } catch {
      return null;
    }
  }

  function applyRoute(route) {
    ui.setView("agents");
    if (route.agentId) openAgent(route.agentId);
    else if (a.id) closeAgent();
  }

  const hash = () => (a.id ? `#/agents/${seg(a.id)}` : "#/agents");

  function reset() {
    resetDetail();
    a.tab = "mine";
    a.listed.clear();
    a.part = "prompt";
    $("agents-list").replaceChildren();
    $("agents-offers-list").replaceChildren();
    $("agents-offers").hidden = true;
    $("agent-detail").hidden = true;
  }

  function wire() {
    for (const button of $("agents-tabs").querySelectorAll("button")) {
      button.addEventListener("click", () => setTab(button.dataset.tab));
    }
    for (const button of $("agent-parts").querySelectorAll("button")) {
      button.addEventListener("click", () => setPart(button.dataset.part));
    }
    $("agent-form").addEventListener("submit", createAgent);
    $("agent-close").addEventListener("click", closeAgent);
    $("agent-detail").addEventListener("keydown", (event) => {
      const typing = event.target.closest("input, textarea, select");
      if (event.key === "Escape" && !typing && !event.defaultPrevented) closeAgent();
    });
    // Filled as the summary is clicked, before the form opens: `toggle` fires later, as a task of its own, and
    // would overwrite what the person has started typing (Enter and Space on a summary click it too).
    $("agent-edit").querySelector("summary").addEventListener("click", () => {
      if (!$("agent-edit").open && a.agent) fillEdit(a.agent);
    });
    $("agent-edit-form").addEventListener("submit", saveEdit);
    $("agent-lock").addEventListener("click", switchAction("prompt-lock"));
    $("agent-archive").addEventListener("click", switchAction("archived"));
    confirming($("agent-delete"), "Delete this agent for everyone, with all it holds? This cannot be undone.",
      "Delete for good", "Deleting the agent failed", deleteAgent);
    $("agent-accept-form").addEventListener("submit", accept);
    $("agent-credential-form").addEventListener("submit", mintCredential);
    $("agent-credential-copy").addEventListener("click", () =>
      ui.copyFrom($("agent-credential-token"), "The credential token"),
    );
    $("agent-credential-done").addEventListener("click", () => {
      hideCredential();
      ui.announce("The credential token is no longer shown.");
      $("agent-credential-h").focus();
    });
    $("agent-prompt-form").addEventListener("submit", savePrompt);
    $("agent-prompt-reload").addEventListener("click", reloadPrompt);
    $("agent-versions-more").addEventListener("click", moreVersions);
    $("agent-profile-form").addEventListener("submit", saveProfile);
    $("agent-brief-form").addEventListener("submit", saveBrief);
    $("agent-brief-edit").addEventListener("click", editBrief);
    $("agent-brief-rename").addEventListener("submit", renameBrief);
    confirming($("agent-brief-delete"), "Delete this brief, every revision, for everyone?", "Delete brief",
      "Deleting the brief failed", deleteBrief);
    $("agent-brief-new").addEventListener("toggle", () => {
      if (!$("agent-brief-new").open && a.briefEditing) {
        a.briefEditing = null;
        $("agent-brief-form").reset();
        $("agent-brief-form-h").textContent = "New brief";
      }
    });
    $("agent-memory-search").addEventListener("submit", searchMemories);
    $("agent-memory-form").addEventListener("submit", writeMemory);
    $("agent-activity-kind").addEventListener("change", () => {
      $("agent-activity").replaceChildren();
      ui.kick();
    });
    $("agent-share-form").addEventListener("submit", share);
    for (const name of PARTS) $(`agent-part-${name}`).hidden = name !== a.part;
  }

  return { refresh, routeFromHash, applyRoute, hash, reset, wire };
}
