// The open agent's prompt: the live version in an editor (plain text: a prompt is code-like, never rendered),
// its versions (restore one, compare one with the live one in a line diff), and the lock's note. A save names the
// version its text started from (`basedOn`): a version saved meanwhile by someone else makes the server refuse it,
// and the page says so before the person tries.

import * as store from "../../core/store.js";
import { seg } from "../../core/api.js";
import { el, fragment, reconcile, setText, replaceIfChanged } from "../../core/dom.js";
import { plural, timeEl } from "../../core/format.js";
import { done, clearError } from "../../core/feedback.js";
import { kick } from "../../core/refresh.js";
import { PAGE, access, attempt, open, path, refs, setHidden, still } from "./common.js";

const DIFF_MAX_LINES = 2000; // per side: the LCS table is (n+1)×(m+1) cells
const DIFF_CONTEXT = 3; // unchanged lines kept around each change
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
      if (skipped) out.push({ op: "…", text: `${plural(skipped, "unchanged line")}` });
      skipped = 0;
      out.push(line);
    } else {
      skipped += 1;
    }
  });
  if (skipped) out.push({ op: "…", text: `${plural(skipped, "unchanged line")}` });
  return out;
}

const MARKUP = `
<section class="part">
  <form novalidate data-ref="form">
    <label for="agent-prompt">Prompt</label>
    <p class="meta" data-ref="meta"></p>
    <p class="warn" data-ref="lockNote" hidden>The owner locked the prompt: no one can save a new version until it
      is unlocked.</p>
    <textarea id="agent-prompt" rows="14" class="mono" spellcheck="false" data-ref="field"></textarea>
    <div class="agent-notice" data-ref="stale" hidden>
      <p data-ref="staleText"></p>
      <button type="button" class="secondary" data-ref="reload">Start again from the live version</button>
    </div>
    <div class="agent-write">
      <label for="agent-prompt-note">Note on this version</label>
      <input id="agent-prompt-note" type="text" maxlength="500" autocomplete="off" data-ref="note">
      <button type="submit">Save prompt</button>
    </div>
  </form>

  <h3 id="agent-versions-h">Versions</h3>
  <p class="empty" data-ref="versionsEmpty" hidden>No versions yet.</p>
  <ul class="list" aria-labelledby="agent-versions-h" data-ref="versions"></ul>
  <button type="button" class="secondary" data-ref="more" hidden>Show older versions</button>

  <section aria-labelledby="agent-diff-h" data-ref="diffBox" hidden>
    <h3 id="agent-diff-h" tabindex="-1" data-ref="diffHeading"></h3>
    <p class="meta" id="agent-diff-summary" data-ref="diffSummary"></p>
    <ol class="diff" aria-label="Changes, line by line" data-ref="diff"></ol>
  </section>
</section>`;

let ui = null;
const state = {
  base: null, // {version, body}: the version the editor's text started from (its basedOn)
  live: null, // the live version last seen
  versions: [],
  cursor: null, // the next page of older versions
  versionsFor: null, // the live version the versions were read at
};

export const promptPart = {
  name: "prompt",
  label: "Prompt",
  build() {
    const section = fragment(MARKUP).firstElementChild;
    ui = refs(section);
    ui.form.addEventListener("submit", save);
    ui.reload.addEventListener("click", reload);
    ui.more.addEventListener("click", moreVersions);
    return section;
  },
  async refresh(current, id, full) {
    const again = full || state.versionsFor !== open.agent.promptVersion;
    await Promise.all([refreshPrompt(current, id), again ? refreshVersions(current, id) : null]);
  },
  render(agent) {
    const readOnly = !access(agent).canEdit;
    if (ui.field.readOnly !== readOnly) ui.field.readOnly = readOnly;
    setHidden(ui.lockNote, !agent.promptLocked);
  },
  reset() {
    Object.assign(state, { base: null, live: null, versions: [], cursor: null, versionsFor: null });
    ui.field.value = "";
    ui.meta.replaceChildren();
    delete ui.meta.dataset.sig;
    ui.versions.replaceChildren();
    ui.diff.replaceChildren();
    for (const node of [ui.diffBox, ui.stale, ui.more, ui.versionsEmpty]) node.hidden = true;
  },
};

/** Read the live prompt when it changed (or `again`); `replace` drops the person's unsaved edit. */
async function refreshPrompt(current, id, again = false, replace = false) {
  const live = open.agent.promptVersion;
  if (!again && state.live === live && state.base) return;
  let prompt = { version: 0, body: "" };
  if (live > 0) prompt = await store.api("GET", path("/prompt"));
  if (!still(id, current)) return;
  showPrompt(prompt, replace);
}

/** The live prompt: into the editor unless the person is editing an older one (then a note says so). */
function showPrompt(prompt, replace = false) {
  const untouched = !state.base || ui.field.value === state.base.body;
  state.live = prompt.version;
  if (prompt.version) {
    const by = `Live version ${prompt.version} · by ${prompt.author}${prompt.tool ? ` (${prompt.tool})` : ""} · `;
    replaceIfChanged(
      ui.meta,
      [by, timeEl(prompt.createdAt), prompt.note ? ` · ${prompt.note}` : ""],
      JSON.stringify([prompt.version, prompt.createdAt]),
    );
  } else {
    replaceIfChanged(ui.meta, ["No prompt yet: the first one you save is version 1."], "none");
  }
  if (untouched || replace) {
    ui.field.value = prompt.body;
    state.base = { version: prompt.version, body: ui.field.value }; // as the textarea holds it (line ends normalised)
    setHidden(ui.stale, true);
  } else if (state.base.version !== prompt.version) {
    setText(
      ui.staleText,
      `Version ${prompt.version} is live now; your edit started from version ${state.base.version}. Saving it is ` +
        "refused until you start again from the live version.",
    );
    setHidden(ui.stale, false);
  }
}

async function save(event) {
  event.preventDefault();
  if (!open.agent) return;
  const id = open.id;
  const body = { body: ui.field.value, basedOn: state.base ? state.base.version : open.agent.promptVersion };
  const note = ui.note.value.trim();
  if (note) body.note = note;
  await attempt("Saving the prompt failed", ui.form, event.submitter, async () => {
    const made = await store.api("POST", path("/prompt"), body);
    if (open.id !== id) return;
    state.base = { version: made.version, body: body.body };
    state.live = made.version;
    open.agent = { ...open.agent, promptVersion: made.version };
    ui.note.value = "";
    setHidden(ui.stale, true);
    await Promise.all([refreshPrompt(null, id, true), refreshVersions(null, id)]);
    done(`Prompt saved: version ${made.version} is live.`);
    kick();
  });
}

async function reload(event) {
  const id = open.id;
  await attempt("Reading the live prompt failed", ui.form, event.currentTarget, async () => {
    await refreshPrompt(null, id, true, true);
    done(`The editor holds the live version ${state.live} now.`);
    ui.field.focus();
  });
}

// -- versions --------------------------------------------------------------------------------------

async function refreshVersions(current, id) {
  const page = await store.api("GET", path(`/prompt/versions?limit=${PAGE}`));
  if (!still(id, current)) return;
  const fresh = page.versions || [];
  const oldest = fresh.length ? fresh[fresh.length - 1].version : Infinity;
  const older = state.versions.filter((v) => v.version < oldest); // kept from "Show older versions"
  state.versions = [...fresh, ...older];
  if (!older.length) state.cursor = page.nextCursor;
  state.versionsFor = open.agent ? open.agent.promptVersion : null;
  renderVersions();
}

async function moreVersions(event) {
  const id = open.id;
  await attempt("Reading older versions failed", ui.versions.parentElement, event.currentTarget, async () => {
    const page = await store.api("GET", path(`/prompt/versions?limit=${PAGE}&cursor=${seg(state.cursor)}`));
    if (open.id !== id) return;
    state.versions = [...state.versions, ...(page.versions || [])].slice(0, VERSIONS_KEPT);
    state.cursor = state.versions.length < VERSIONS_KEPT ? page.nextCursor : null;
    renderVersions();
  });
}

function renderVersions() {
  reconcile(ui.versions, state.versions, (v) => v.version, versionItem, updateVersionItem);
  setHidden(ui.versionsEmpty, state.versions.length > 0);
  setHidden(ui.more, !state.cursor);
}

function versionItem(version) {
  const li = el("li", { className: "version" });
  const compare = el("button", { type: "button", className: "secondary small", text: "Compare with live" });
  compare.setAttribute("aria-label", `Compare version ${version.version} with the live version`);
  compare.addEventListener("click", (event) => compareVersion(version.version, event.currentTarget));
  const restore = el("button", { type: "button", className: "secondary small restore", text: "Restore" });
  restore.setAttribute("aria-label", `Restore version ${version.version}`);
  restore.addEventListener("click", (event) => restoreVersion(version.version, li, event.currentTarget));
  li.append(
    el("p", { className: "version-head" }),
    el("p", { className: "meta" }),
    el("div", { className: "actions" }, compare, restore),
  );
  updateVersionItem(li, version);
  return li;
}

function updateVersionItem(li, version) {
  const live = version.status === "live";
  replaceIfChanged(
    li.querySelector(".version-head"),
    [
      el("strong", { text: `Version ${version.version}` }),
      " ",
      el("span", { className: `badge${live ? " live" : ""}`, text: version.status }),
    ],
    version.status,
  );
  replaceIfChanged(
    li.querySelector(".meta"),
    [
      `by ${version.author}${version.tool ? ` (${version.tool})` : ""} · `,
      timeEl(version.createdAt),
      version.note ? ` · ${version.note}` : "",
    ],
    JSON.stringify([version.author, version.tool, version.createdAt, version.note]),
  );
  setHidden(li.querySelector(".actions"), live);
  setHidden(li.querySelector(".restore"), !access().canEdit);
}

async function compareVersion(version, button) {
  const id = open.id;
  await attempt(`Comparing version ${version} failed`, button.closest("li"), button, async () => {
    const [old, live] = await Promise.all([
      store.api("GET", path(`/prompt?version=${seg(version)}`)),
      store.api("GET", path("/prompt")),
    ]);
    if (open.id !== id) return;
    setText(ui.diffHeading, `Version ${old.version} → live version ${live.version}`);
    const lines = lineDiff(old.body, live.body);
    if (!lines) {
      const count = (text) => text.split("\n").length.toLocaleString("en");
      setText(
        ui.diffSummary,
        `Too long to compare here: version ${old.version} has ${count(old.body)} lines and version ` +
          `${live.version} ${count(live.body)}; the console compares up to ${DIFF_MAX_LINES.toLocaleString("en")} ` +
          "lines each.",
      );
      ui.diff.replaceChildren();
    } else {
      const added = lines.filter((l) => l.op === "+").length;
      const removed = lines.filter((l) => l.op === "-").length;
      setText(
        ui.diffSummary,
        added || removed ? `${plural(added, "line")} added, ${plural(removed, "line")} removed.` : "No differences.",
      );
      ui.diff.replaceChildren(
        ...folded(lines).map((line) => {
          const kind = { "+": "add", "-": "del", " ": "same", "…": "skip" }[line.op];
          const mark = { "+": "+ ", "-": "- ", " ": "  ", "…": "… " }[line.op];
          return el("li", { className: `diff-${kind}`, text: `${mark}${line.text}` });
        }),
      );
    }
    setHidden(ui.diffBox, false);
    ui.diffHeading.focus();
  });
}

async function restoreVersion(version, li, button) {
  const id = open.id;
  await attempt(`Restoring version ${version} failed`, li, button, async () => {
    const made = await store.api("POST", path(`/prompt/versions/${seg(version)}/restore`));
    if (open.id !== id) return;
    open.agent = { ...open.agent, promptVersion: made.version };
    await Promise.all([refreshPrompt(null, id, true), refreshVersions(null, id)]);
    clearError(ui.form);
    done(`Version ${version} restored: its text is live as version ${made.version}.`);
    kick();
  });
}
