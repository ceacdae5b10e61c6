// Agent Workspace console: the human's side of the REST API, in plain ES2020.
//
// Rules this file keeps: data from the server (written by agents, so untrusted) only ever reaches the
// page through textContent, attributes set one by one, and links whose scheme is checked; no
// innerHTML. The human token lives in sessionStorage only. Lists refresh by polling, one request
// round at a time, and are reconciled by id so a form being filled in is never replaced.

const TOKEN_KEY = "agentWorkspace.humanToken";
const WORKSPACE_KEY = "agentWorkspace.workspaceId";
const POLL_MS = 3000;
const STATUSES = ["notstarted", "ongoing", "blocked", "completed", "rejected"];
const STATUS_NAMES = {
  notstarted: "Not started",
  ongoing: "Ongoing",
  blocked: "Blocked",
  completed: "Completed",
  rejected: "Rejected",
};
const KIND_NAMES = {
  message: "Message",
  question: "Question",
  answer: "Answer",
  siteCall: "Site-tool call",
  siteCallDecision: "Decision",
};
const DECISIONS = [
  ["allow_once", "Allow once"],
  ["always_allow", "Always allow"],
  ["deny", "Deny"],
];
const MAX_FILES = 10;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  workspaces: [],
  workspaceId: null,
  view: "tasks",
  statusFilter: "",
  taskId: null,
  memoryName: null,
  skillName: null,
  panoId: null,
  taskTitles: new Map(),
  seenQuestions: null, // ids known at the last refresh; null before the first one
  seenCalls: null,
};

// -- the API ------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, title, detail) {
    super(detail);
    this.status = status;
    this.title = title;
    this.detail = detail;
  }
}

async function api(method, path, body, token = state.token) {
  const headers = { Accept: "application/json, application/problem+json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, cache: "no-store", credentials: "omit", redirect: "error" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, "Network error", `the server could not be reached (${error.message})`);
  }
  const text = response.status === 204 ? "" : await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const detail =
      data && typeof data.detail === "string" ? data.detail : text.trim().slice(0, 500) || response.statusText;
    const title = data && typeof data.title === "string" ? data.title : response.statusText;
    throw new ApiError(response.status, title, detail);
  }
  return data;
}

const seg = encodeURIComponent;
const ws = (rest = "") => `/api/workspaces/${seg(state.workspaceId)}${rest}`;

// -- messages to the human ------------------------------------------------------------------------

let alertFromPolling = false;

function showError(error, context) {
  const alert = $("alert");
  const status = error instanceof ApiError && error.status ? ` (${error.status} ${error.title})` : "";
  const detail = error instanceof ApiError ? error.detail : String(error && error.message ? error.message : error);
  const text = `${context ? `${context}: ` : ""}${detail}${status}`;
  const current = alert.querySelector(".alert-text");
  if (current && current.textContent === text) return; // no repeated announcement for the same failure
  alert.replaceChildren();
  const p = el("p", { className: "alert-text", text });
  const dismiss = el("button", { type: "button", className: "secondary small", text: "Dismiss" });
  dismiss.setAttribute("aria-label", "Dismiss the error");
  dismiss.addEventListener("click", clearError);
  alert.append(p, dismiss);
  alert.classList.add("shown");
}

function clearError() {
  const alert = $("alert");
  alert.replaceChildren();
  alert.classList.remove("shown");
  alertFromPolling = false;
}

function announce(text) {
  const status = $("status");
  status.textContent = text;
}

// -- DOM helpers ----------------------------------------------------------------------------------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value; // a property: htmlFor, href, type, value, rows, ...
    else node.setAttribute(key, String(value)); // aria-* and other plain attributes
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

let uid = 0;
const nextId = (prefix) => `${prefix}-${++uid}`;

/** Keep `container`'s children in step with `items`, by key: new ones created, gone ones removed, kept ones updated. */
function reconcile(container, items, key, create, update) {
  const existing = new Map();
  for (const child of Array.from(container.children)) existing.set(child.dataset.key, child);
  const wanted = [];
  for (const item of items) {
    const k = String(key(item));
    let node = existing.get(k);
    if (node) {
      existing.delete(k);
      if (update) update(node, item);
    } else {
      node = create(item);
      node.dataset.key = k;
    }
    wanted.push(node);
  }
  for (const gone of existing.values()) gone.remove();
  wanted.forEach((node, index) => {
    if (container.children[index] !== node) container.insertBefore(node, container.children[index] || null);
  });
}

function safeHttpUrl(value) {
  try {
    const url = new URL(value, window.location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

function timeEl(iso) {
  return el("time", { dateTime: iso || "", text: when(iso) });
}

function json(value) {
  return JSON.stringify(value, null, 2);
}

function setEmpty(id, empty) {
  $(id).hidden = !empty;
}

function taskTitle(taskId) {
  return state.taskTitles.get(taskId) || `task ${taskId}`;
}

// -- files --------------------------------------------------------------------------------------

function readFiles(input) {
  const files = Array.from(input.files || []);
  if (files.length > MAX_FILES) return Promise.reject(new Error(`at most ${MAX_FILES} files per request`));
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (total > MAX_FILE_BYTES) return Promise.reject(new Error("at most 4 MiB of files per request"));
  const stamp = Date.now().toString(36);
  return Promise.all(
    files.map(
      (file, index) =>
        new Promise((resolve, reject) => {
          const reader = new FileReader();
          reader.onload = () => {
            const url = String(reader.result);
            resolve({
              id: `${stamp}-${index}-${Math.random().toString(36).slice(2, 8)}`,
              filename: file.name,
              mimeType: file.type || "application/octet-stream",
              data: url.slice(url.indexOf(",") + 1),
            });
          };
          reader.onerror = () => reject(new Error(`could not read ${file.name}`));
          reader.readAsDataURL(file);
        }),
    ),
  );
}

/** A button that fetches the attachment's short-lived link when clicked, then opens it (with a link to fall back on). */
function attachmentItem(taskId, attachment) {
  const li = el("li", { className: "attachment" });
  const button = el("button", { type: "button", className: "linkish", text: attachment.filename });
  button.setAttribute("aria-label", `Download ${attachment.filename}`);
  const size = el("span", { className: "meta", text: ` ${formatSize(attachment.size)} · ${attachment.mimeType}` });
  const fallback = el("span", { className: "fallback" });
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const found = await api(
        "GET",
        ws(`/tasks/${seg(taskId)}/attachments/${seg(attachment.id)}?format=url`),
      );
      const href = safeHttpUrl(found && found.url);
      if (!href) throw new Error("the server gave no download link");
      const link = el("a", {
        href,
        target: "_blank",
        rel: "noopener noreferrer",
        text: `Open ${attachment.filename}`,
      });
      fallback.replaceChildren(" ", link);
      window.open(href, "_blank", "noopener,noreferrer");
      announce(`Download link for ${attachment.filename} opened`);
    } catch (error) {
      showError(error, `Downloading ${attachment.filename}`);
    } finally {
      button.disabled = false;
    }
  });
  li.append(button, size, fallback);
  return li;
}

function formatSize(bytes) {
  if (typeof bytes !== "number") return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

// -- signing in and out -------------------------------------------------------------------------

async function signIn(token) {
  clearError();
  let workspaces;
  try {
    workspaces = await api("GET", "/api/workspaces", undefined, token);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      sessionStorage.removeItem(TOKEN_KEY);
    }
    if (error instanceof ApiError && error.status === 401) {
      showError(error, "Sign-in failed, the token was refused");
    } else if (error instanceof ApiError && error.status === 403) {
      showError(error, "Sign-in failed, this is not a human token");
    } else {
      showError(error, "Sign-in failed");
    }
    return false;
  }
  state.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token-input").value = "";
  $("signin").hidden = true;
  $("app").hidden = false;
  $("session").hidden = false;
  setWorkspaces(workspaces);
  const remembered = sessionStorage.getItem(WORKSPACE_KEY);
  const pick = workspaces.find((w) => w.id === remembered) || workspaces[0];
  selectWorkspace(pick ? pick.id : null);
  announce(`Signed in. ${workspaces.length} workspace${workspaces.length === 1 ? "" : "s"}.`);
  $("workspace-h").setAttribute("tabindex", "-1");
  $("workspace-h").focus();
  return true;
}

function signOut(message) {
  stopPolling();
  state.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(WORKSPACE_KEY);
  Object.assign(state, {
    workspaces: [],
    workspaceId: null,
    taskId: null,
    memoryName: null,
    skillName: null,
    panoId: null,
    seenQuestions: null,
    seenCalls: null,
  });
  state.taskTitles.clear();
  hideCreated();
  for (const id of ["questions-list", "calls-list", "tasks-list", "conversation", "memory-list", "skills-list",
    "pano-list", "workspace-select"]) {
    $(id).replaceChildren();
  }
  for (const id of ["task-detail", "memory-detail", "skill-detail", "pano-detail"]) $(id).hidden = true;
  $("app").hidden = true;
  $("session").hidden = true;
  $("signin").hidden = false;
  if (!message) clearError();
  announce(message || "Signed out. The token was removed from this tab.");
  $("token-input").focus();
}

function handleAuthFailure(error) {
  if (error instanceof ApiError && error.status === 401) {
    signOut("Signed out: the server no longer accepts this token.");
    showError(error, "Signed out, the token was refused");
    return true;
  }
  return false;
}

// -- workspaces ---------------------------------------------------------------------------------

function setWorkspaces(workspaces) {
  state.workspaces = workspaces;
  const select = $("workspace-select");
  reconcile(
    select,
    workspaces,
    (w) => w.id,
    (w) => el("option", { value: w.id, text: w.title }),
    (node, w) => {
      node.textContent = w.title;
    },
  );
  if (state.workspaceId) select.value = state.workspaceId;
  $("workspace-none").hidden = workspaces.length > 0;
  if (!workspaces.length) $("new-workspace").open = true;
}

function selectWorkspace(id) {
  state.workspaceId = id;
  state.taskId = null;
  state.memoryName = null;
  state.skillName = null;
  state.seenQuestions = null;
  state.seenCalls = null;
  if (id) sessionStorage.setItem(WORKSPACE_KEY, id);
  else sessionStorage.removeItem(WORKSPACE_KEY);
  $("workspace-select").value = id || "";
  const workspace = state.workspaces.find((w) => w.id === id);
  $("workspace-info").hidden = !workspace;
  $("workspace-title").textContent = workspace ? workspace.title : "";
  $("workspace-mission").textContent = workspace ? workspace.mission || "No mission set." : "";
  $("workspace-id").textContent = workspace ? `id ${workspace.id}` : "";
  for (const list of ["questions-list", "calls-list", "tasks-list", "conversation", "memory-list", "skills-list"]) {
    $(list).replaceChildren();
  }
  for (const detail of ["task-detail", "memory-detail", "skill-detail"]) $(detail).hidden = true;
  for (const part of ["questions", "site-calls", "task-form"]) $(part).hidden = !id;
  restartPolling();
}

async function createWorkspace(event) {
  event.preventDefault();
  const title = $("ws-title").value;
  const mission = $("ws-mission").value;
  try {
    const created = await api("POST", "/api/workspaces", { title, mission });
    $("ws-title").value = "";
    $("ws-mission").value = "";
    $("new-workspace").open = false;
    const { agentToken, tokenId, ...workspace } = created;
    setWorkspaces([...state.workspaces.filter((w) => w.id !== workspace.id), workspace]);
    selectWorkspace(workspace.id);
    showCreated(workspace, agentToken);
    clearError();
    announce(`Workspace ${workspace.title} created. Copy its agent token now: it is shown once.`);
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Creating the workspace failed");
  }
}

function mcpSnippet(token) {
  return json({
    mcpServers: {
      "agent-workspace": {
        type: "http",
        url: `${window.location.origin}/mcp`,
        headers: { Authorization: `Bearer ${token}` },
      },
    },
  });
}

function showCreated(workspace, token) {
  $("created-title").textContent = workspace.title;
  $("created-token").value = token;
  $("created-snippet").value = mcpSnippet(token);
  $("created-panel").hidden = false;
  $("created-h").focus();
}

function hideCreated() {
  $("created-token").value = "";
  $("created-snippet").value = "";
  $("created-panel").hidden = true;
}

async function copyFrom(field, what) {
  const text = field.value;
  try {
    if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
    await navigator.clipboard.writeText(text);
    announce(`${what} was copied to the clipboard.`);
  } catch {
    field.focus();
    field.select();
    field.setSelectionRange(0, text.length);
    announce(`${what} is selected: press Ctrl+C (or ⌘C) to copy it.`);
  }
}

// -- polling ------------------------------------------------------------------------------------

const poller = { generation: 0, timer: null, running: false, again: false, rounds: 0 };

function restartPolling() {
  poller.generation += 1;
  clearTimeout(poller.timer);
  poller.timer = null;
  kick();
}

function stopPolling() {
  poller.generation += 1;
  clearTimeout(poller.timer);
  poller.timer = null;
  poller.again = false;
}

/** Refresh now: at once if idle, else right after the round in flight (rounds never overlap). */
function kick() {
  if (!state.token) return;
  if (poller.running) {
    poller.again = true;
    return;
  }
  clearTimeout(poller.timer);
  poller.timer = null;
  runRound();
}

async function runRound() {
  const generation = poller.generation;
  poller.running = true;
  const current = () => generation === poller.generation && state.token !== null;
  try {
    await refreshVisible(current);
    if (current()) document.body.dataset.rounds = String(++poller.rounds); // finished rounds, for tests
  } finally {
    poller.running = false;
    if (state.token) {
      if (poller.again || generation !== poller.generation) {
        poller.again = false;
        runRound();
      } else {
        poller.timer = setTimeout(runRound, POLL_MS);
      }
    }
  }
}

async function refreshVisible(current) {
  const jobs = [refreshWorkspaces];
  if (state.workspaceId) jobs.push(refreshQuestions, refreshCalls);
  if (state.view === "tasks" && state.workspaceId) jobs.push(refreshTasks, refreshCounts);
  if (state.view === "tasks" && state.workspaceId && state.taskId) jobs.push(refreshTask);
  if (state.view === "memory" && state.workspaceId) jobs.push(refreshMemory);
  if (state.view === "skills" && state.workspaceId) jobs.push(refreshSkills);
  if (state.view === "pano") jobs.push(refreshPano);
  const results = await Promise.allSettled(jobs.map((job) => job(current)));
  if (!current()) return;
  const failed = results.find((r) => r.status === "rejected");
  if (failed) {
    if (handleAuthFailure(failed.reason)) return;
    showError(failed.reason, "Refreshing failed");
    alertFromPolling = true;
  } else if (alertFromPolling) {
    clearError();
  }
}

async function refreshWorkspaces(current) {
  const workspaces = await api("GET", "/api/workspaces");
  if (!current()) return;
  setWorkspaces(workspaces);
  if (!state.workspaceId && workspaces.length) selectWorkspace(workspaces[0].id);
}

// -- questions (elicitations) ---------------------------------------------------------------------

async function refreshQuestions(current) {
  const questions = await api("GET", ws("/elicitations?status=pending"));
  if (!current()) return;
  await learnTitles(questions.map((q) => q.taskId), current);
  if (!current()) return;
  const fresh = state.seenQuestions ? questions.filter((q) => !state.seenQuestions.has(q.id)) : [];
  state.seenQuestions = new Set(questions.map((q) => q.id));
  reconcile($("questions-list"), questions, (q) => q.id, questionCard, updateQuestionCard);
  setEmpty("questions-empty", questions.length === 0);
  $("questions-count").textContent = questions.length ? `(${questions.length})` : "";
  if (fresh.length === 1) announce(`New question from the agent: ${fresh[0].message}`);
  else if (fresh.length > 1) announce(`${fresh.length} new questions from the agent.`);
}

const titleLookups = new Map();

async function learnTitles(taskIds, current) {
  const unknown = [...new Set(taskIds)].filter((id) => !state.taskTitles.has(id));
  await Promise.all(
    unknown.map((id) => {
      if (!titleLookups.has(id)) {
        const lookup = api("GET", ws(`/tasks/${seg(id)}?limit=1`))
          .then((task) => {
            if (current()) state.taskTitles.set(id, task.title);
          })
          .catch(() => {}) // the title is a nicety; the id is shown instead
          .finally(() => titleLookups.delete(id));
        titleLookups.set(id, lookup);
      }
      return titleLookups.get(id);
    }),
  );
}

function openTaskButton(taskId) {
  const button = el("button", { type: "button", className: "linkish", text: taskTitle(taskId) });
  button.dataset.taskId = taskId;
  button.addEventListener("click", () => openTask(taskId));
  return button;
}

function questionCard(question) {
  const headingId = nextId("q");
  const card = el("article", { className: "item question" });
  card.setAttribute("aria-labelledby", headingId);
  const heading = el("h3", { id: headingId, text: question.message });
  const where = el("p", { className: "meta" }, "In ", openTaskButton(question.taskId), " · until ",
    timeEl(question.expiresAt));
  card.append(heading, where);
  if (question.mode === "url") card.append(urlAnswer(question));
  else card.append(formAnswer(question));
  return card;
}

function updateQuestionCard(card, question) {
  const button = card.querySelector("button[data-task-id]");
  if (button) button.textContent = taskTitle(question.taskId);
}

async function answerQuestion(question, body, card) {
  for (const b of card.querySelectorAll("button")) b.disabled = true;
  try {
    await api("POST", ws(`/elicitations/${seg(question.id)}/answer`), body);
    removeCard(card, "questions-h");
    state.seenQuestions?.delete(question.id);
    const left = $("questions-list").children.length;
    setEmpty("questions-empty", left === 0);
    $("questions-count").textContent = left ? `(${left})` : "";
    clearError();
    announce(`Answer sent (${body.action}): ${question.message}`);
    kick();
  } catch (error) {
    for (const b of card.querySelectorAll("button")) b.disabled = false;
    if (!handleAuthFailure(error)) showError(error, "Answering the question failed");
    if (error instanceof ApiError && error.status === 409) kick();
  }
}

/** Remove a decided card; keyboard focus goes to the next card's heading, or the list's heading. */
function removeCard(card, headingId) {
  const hadFocus = card.contains(document.activeElement);
  const next = card.nextElementSibling || card.previousElementSibling;
  card.remove();
  if (!hadFocus) return;
  const target = (next && next.querySelector("h3")) || $(headingId);
  target.setAttribute("tabindex", "-1");
  target.focus();
}

function declineCancelButtons(question, card) {
  return [
    ["decline", "Decline"],
    ["cancel", "Cancel"],
  ].map(([action, label]) => {
    const button = el("button", { type: "button", className: "secondary", text: label });
    button.addEventListener("click", () => answerQuestion(question, { action }, card()));
    return button;
  });
}

function urlAnswer(question) {
  const box = el("div", { className: "answer" });
  const href = safeHttpUrl(question.url);
  if (href) {
    box.append(
      el("p", {}, el("a", { href, target: "_blank", rel: "noopener noreferrer", text: `Open ${question.url}` })),
    );
  } else {
    box.append(el("p", { className: "meta", text: `Link (not http/https, not opened): ${question.url}` }));
  }
  box.append(el("p", { className: "hint", text: "Open the link, do what it asks, then say you are done." }));
  const actions = el("div", { className: "actions" });
  const accept = el("button", { type: "button", text: "Accept (done)" });
  accept.addEventListener("click", () => answerQuestion(question, { action: "accept" }, box.closest("article")));
  actions.append(accept, ...declineCancelButtons(question, () => box.closest("article")));
  box.append(actions);
  return box;
}

/** The form for a question's requestedSchema: string, enum, number/integer and boolean fields. */
function formAnswer(question) {
  const schema = question.requestedSchema || {};
  const properties = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const form = el("form", { className: "answer", noValidate: false });
  form.setAttribute("aria-label", `Answer: ${question.message}`);
  const readers = [];
  for (const [name, property] of Object.entries(properties)) {
    const field = schemaField(name, property || {}, required.has(name));
    form.append(field.node);
    readers.push([name, field.read]);
  }
  if (required.size) form.append(el("p", { className: "hint", text: "Fields marked * are required." }));
  const actions = el("div", { className: "actions" });
  actions.append(
    el("button", { type: "submit", text: "Submit answer" }),
    ...declineCancelButtons(question, () => form.closest("article")),
  );
  form.append(actions);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const content = {};
    for (const [name, read] of readers) {
      const value = read();
      if (value !== undefined) content[name] = value;
    }
    answerQuestion(question, { action: "accept", content }, form.closest("article"));
  });
  return form;
}

function enumChoices(property) {
  if (Array.isArray(property.enum)) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : [];
    return property.enum.map((value, i) => [value, names[i] !== undefined ? String(names[i]) : String(value)]);
  }
  const options = Array.isArray(property.oneOf) ? property.oneOf : Array.isArray(property.anyOf) ? property.anyOf : [];
  if (options.length && options.every((o) => o && "const" in o)) {
    return options.map((o) => [o.const, o.title !== undefined ? String(o.title) : String(o.const)]);
  }
  return null;
}

function schemaField(name, property, isRequired) {
  const id = nextId("field");
  const hintId = property.description ? nextId("hint") : null;
  const wrap = el("div", { className: "field" });
  const labelText = property.title ? String(property.title) : name;
  const label = el("label", { htmlFor: id }, labelText);
  if (isRequired) label.append(el("span", { className: "required", text: " *", "aria-hidden": "true" }));
  const hint = hintId ? el("p", { id: hintId, className: "hint", text: String(property.description) }) : null;
  const type = Array.isArray(property.type) ? property.type.find((t) => t !== "null") : property.type;
  const choices = enumChoices(property);
  let input;
  let read;

  if (type === "boolean") {
    input = el("input", { id, type: "checkbox" });
    input.checked = property.default === true;
    wrap.classList.add("check");
    wrap.append(input, label);
    read = () => input.checked; // a checkbox has no "unset": unchecked is false
  } else if (choices) {
    input = el("select", { id });
    const blank = el("option", { value: "", text: isRequired ? "Choose…" : "(none)" });
    input.append(blank);
    choices.forEach(([value, text], index) => {
      const option = el("option", { value: String(index), text });
      if (property.default !== undefined && property.default === value) option.selected = true;
      input.append(option);
    });
    wrap.append(label, input);
    read = () => (input.value === "" ? undefined : choices[Number(input.value)][0]);
  } else if (type === "number" || type === "integer") {
    input = el("input", { id, type: "number", inputMode: type === "integer" ? "numeric" : "decimal" });
    input.step = type === "integer" ? "1" : "any";
    if (typeof property.minimum === "number") input.min = String(property.minimum);
    if (typeof property.maximum === "number") input.max = String(property.maximum);
    if (typeof property.default === "number") input.value = String(property.default);
    wrap.append(label, input);
    read = () => {
      if (input.value === "") return undefined;
      const n = Number(input.value);
      return type === "integer" ? Math.trunc(n) : n;
    };
  } else {
    const formats = { email: "email", uri: "url", date: "date" };
    const long = typeof property.maxLength === "number" ? property.maxLength > 200 : false;
    input = long ? el("textarea", { id, rows: 3 }) : el("input", { id, type: formats[property.format] || "text" });
    if (typeof property.minLength === "number") input.minLength = property.minLength;
    if (typeof property.maxLength === "number") input.maxLength = property.maxLength;
    // No input.pattern: the agent's pattern would run in this tab's regex engine, which has no time limit
    // (a catastrophic one freezes the page on each keystroke). The server checks it with a bounded engine
    // when the answer is sent, and its 422 names the field.
    if (typeof property.default === "string") input.value = property.default;
    wrap.append(label, input);
    read = () => (input.value === "" && !isRequired ? undefined : input.value);
  }
  input.name = name;
  if (isRequired && type !== "boolean") input.required = true;
  if (isRequired) input.setAttribute("aria-required", "true");
  if (hint) {
    input.setAttribute("aria-describedby", hintId);
    wrap.append(hint);
  }
  return { node: wrap, read };
}

// -- site-tool calls ------------------------------------------------------------------------------

async function refreshCalls(current) {
  const calls = await api("GET", ws("/site-calls?status=pending"));
  if (!current()) return;
  await learnTitles(calls.map((c) => c.taskId), current);
  if (!current()) return;
  const fresh = state.seenCalls ? calls.filter((c) => !state.seenCalls.has(c.id)) : [];
  state.seenCalls = new Set(calls.map((c) => c.id));
  reconcile($("calls-list"), calls, (c) => c.id, callCard, updateQuestionCard);
  setEmpty("calls-empty", calls.length === 0);
  $("calls-count").textContent = calls.length ? `(${calls.length})` : "";
  if (fresh.length === 1) announce(`The agent wants to run ${fresh[0].tool} on ${fresh[0].site}.`);
  else if (fresh.length > 1) announce(`${fresh.length} new site-tool calls wait for your decision.`);
}

function callCard(call) {
  const headingId = nextId("c");
  const card = el("article", { className: "item site-call" });
  card.setAttribute("aria-labelledby", headingId);
  card.append(
    el("h3", { id: headingId, text: `${call.tool} on ${call.site}` }),
    el("p", { className: "meta" }, "In ", openTaskButton(call.taskId), " · asked ", timeEl(call.createdAt)),
  );
  const facts = el("dl", { className: "facts" });
  facts.append(el("dt", { text: "Site" }), el("dd", { text: call.site }));
  facts.append(el("dt", { text: "Tool" }), el("dd", { text: call.tool }));
  const argsId = nextId("args");
  card.append(
    facts,
    el("p", { id: argsId, className: "label", text: "Arguments" }),
    el("pre", { className: "json", text: json(call.arguments), "aria-labelledby": argsId }),
  );
  const actions = el("div", { className: "actions" });
  for (const [decision, label] of DECISIONS) {
    const button = el("button", {
      type: "button",
      className: decision === "deny" ? "danger" : decision === "always_allow" ? "secondary" : "",
      text: label,
    });
    button.addEventListener("click", () => decide(call, decision, label, card));
    actions.append(button);
  }
  card.append(actions);
  return card;
}

async function decide(call, decision, label, card) {
  for (const b of card.querySelectorAll("button")) b.disabled = true;
  try {
    await api("POST", ws(`/site-calls/${seg(call.id)}/decision`), { decision });
    removeCard(card, "calls-h");
    state.seenCalls?.delete(call.id);
    const left = $("calls-list").children.length;
    setEmpty("calls-empty", left === 0);
    $("calls-count").textContent = left ? `(${left})` : "";
    clearError();
    announce(`${label}: ${call.tool} on ${call.site}`);
    kick();
  } catch (error) {
    for (const b of card.querySelectorAll("button")) b.disabled = false;
    if (!handleAuthFailure(error)) showError(error, "Deciding the site-tool call failed");
    if (error instanceof ApiError && error.status === 409) kick();
  }
}

// -- tasks --------------------------------------------------------------------------------------

function buildStatusFilter() {
  const group = $("status-filter");
  const options = [["", "All"], ...STATUSES.map((s) => [s, STATUS_NAMES[s]])];
  for (const [value, text] of options) {
    const button = el("button", { type: "button", className: "chip" });
    button.dataset.status = value;
    button.append(el("span", { text }), el("span", { className: "count" }));
    button.setAttribute("aria-pressed", String(value === state.statusFilter));
    button.addEventListener("click", () => {
      state.statusFilter = value;
      for (const b of group.querySelectorAll("button")) {
        b.setAttribute("aria-pressed", String(b.dataset.status === value));
      }
      $("tasks-list").replaceChildren();
      kick();
    });
    group.append(button);
  }
  const select = $("status-select");
  for (const s of STATUSES) select.append(el("option", { value: s, text: STATUS_NAMES[s] }));
}

async function refreshCounts(current) {
  const detail = await api("GET", ws());
  if (!current()) return;
  const counts = detail.taskCounts || {};
  let total = 0;
  for (const s of STATUSES) total += counts[s] || 0;
  for (const button of $("status-filter").querySelectorAll("button")) {
    const s = button.dataset.status;
    const n = s ? counts[s] || 0 : total;
    button.querySelector(".count").textContent = ` ${n}`;
  }
}

async function refreshTasks(current) {
  const params = new URLSearchParams({ limit: "200" });
  if (state.statusFilter) params.set("status", state.statusFilter);
  const assignee = $("assignee-filter").value;
  if (assignee) params.set("assignee", assignee);
  const page = await api("GET", ws(`/tasks?${params}`));
  if (!current()) return;
  const tasks = page.tasks || [];
  for (const task of tasks) state.taskTitles.set(task.id, task.title);
  reconcile($("tasks-list"), tasks, (t) => t.id, taskItem, updateTaskItem);
  setEmpty("tasks-empty", tasks.length === 0);
  $("tasks-more").hidden = !page.nextCursor;
}

function taskItem(task) {
  const li = el("li", { className: "task" });
  const button = el("button", { type: "button", className: "linkish task-open" });
  button.addEventListener("click", () => openTask(li.dataset.key));
  const meta = el("p", { className: "meta" });
  li.append(button, meta);
  updateTaskItem(li, task);
  return li;
}

function updateTaskItem(li, task) {
  const button = li.querySelector(".task-open");
  button.textContent = task.title;
  if (task.id === state.taskId) button.setAttribute("aria-current", "true");
  else button.removeAttribute("aria-current");
  const meta = li.querySelector(".meta");
  meta.replaceChildren(
    el("span", { className: `badge status-${task.status}`, text: STATUS_NAMES[task.status] || task.status }),
    ` for ${task.assignee} · by ${task.createdBy}`,
    task.cronSchedule ? ` · cron ${task.cronSchedule}` : "",
    " · ",
    timeEl(task.updatedAt),
  );
}

async function createTask(event) {
  event.preventDefault();
  const button = event.submitter || $("task-form").querySelector("button");
  button.disabled = true;
  try {
    const attachments = await readFiles($("task-files"));
    const body = { title: $("task-title").value, body: $("task-body").value };
    if (attachments.length) body.attachments = attachments;
    const task = await api("POST", ws("/tasks"), body);
    state.taskTitles.set(task.id, task.title);
    $("task-form").reset();
    clearError();
    announce(`Task ${task.title} created for the agent.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Creating the task failed");
  } finally {
    button.disabled = false;
  }
}

function openTask(taskId) {
  if (state.view !== "tasks") setView("tasks");
  const changed = state.taskId !== taskId;
  state.taskId = taskId;
  if (changed) {
    $("conversation").replaceChildren();
    $("task-h").textContent = taskTitle(taskId);
    $("task-facts").replaceChildren();
    $("task-body-text").textContent = "";
    $("task-attachments").replaceChildren();
    $("reply-form").reset();
  }
  for (const li of $("tasks-list").children) {
    const b = li.querySelector(".task-open");
    if (li.dataset.key === taskId) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  $("task-detail").hidden = false;
  $("task-h").focus();
  kick();
}

function closeTask() {
  const id = state.taskId;
  state.taskId = null;
  $("task-detail").hidden = true;
  $("conversation").replaceChildren();
  const back = Array.from($("tasks-list").children).find((li) => li.dataset.key === id);
  if (back) back.querySelector("button").focus();
  else $("tasks-h").focus();
}

async function refreshTask(current) {
  const taskId = state.taskId;
  let task = await api("GET", ws(`/tasks/${seg(taskId)}?limit=200`));
  const messages = [...task.conversation.messages];
  let cursor = task.conversation.nextCursor;
  while (cursor && current() && state.taskId === taskId) {
    const more = await api("GET", ws(`/tasks/${seg(taskId)}?limit=200&cursor=${seg(cursor)}`));
    messages.push(...more.conversation.messages);
    cursor = more.conversation.nextCursor;
    task = more;
  }
  if (!current() || state.taskId !== taskId) return;
  renderTask(task, messages);
}

function renderTask(task, messages) {
  state.taskTitles.set(task.id, task.title);
  $("task-h").textContent = task.title;
  const facts = $("task-facts");
  const rows = [
    ["Status", STATUS_NAMES[task.status] || task.status],
    ["Assignee", task.assignee],
    ["Created by", task.createdBy],
    ["Created", when(task.createdAt)],
    ["Updated", when(task.updatedAt)],
  ];
  if (task.cronSchedule) rows.push(["Cron", `${task.cronSchedule}${task.timezone ? ` (${task.timezone})` : ""}`]);
  if (task.claim) rows.push(["Claimed", when(task.claim.claimedAt)]);
  facts.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  $("task-body-text").textContent = task.body || "(no body)";
  const files = $("task-attachments");
  if (task.attachments && task.attachments.length) {
    const list = el("ul", { className: "list attachments" });
    list.setAttribute("aria-label", "Task files");
    for (const a of task.attachments) list.append(attachmentItem(task.id, a));
    files.replaceChildren(el("h3", { text: "Files" }), list);
  } else {
    files.replaceChildren();
  }
  const select = $("status-select");
  if (document.activeElement !== select && select.dataset.for !== `${task.id}:${task.status}`) {
    select.value = task.status;
    select.dataset.for = `${task.id}:${task.status}`;
  }
  const before = $("conversation").children.length;
  reconcile($("conversation"), messages, (m) => m.id, (m) => messageItem(task.id, m));
  setEmpty("conversation-empty", messages.length === 0);
  if (before && messages.length > before) announce(`${messages.length - before} new message(s) in ${task.title}.`);
}

function messageItem(taskId, message) {
  const kind = KIND_NAMES[message.kind] ? message.kind : "message";
  const from = message.from === "human" ? "You" : message.from === "agent" ? "Agent" : String(message.from);
  const li = el("li", { className: `msg kind-${kind} from-${message.from === "human" ? "human" : "agent"}` });
  li.dataset.kind = message.kind;
  const head = el(
    "p",
    { className: "msg-head" },
    el("span", { className: "badge kind", text: KIND_NAMES[message.kind] || message.kind }),
    " ",
    el("strong", { text: from }),
    " · ",
    timeEl(message.createdAt),
  );
  li.append(head, el("p", { className: "text", text: message.text }));
  if (message.kind === "question") {
    if (message.mode === "url" && message.url) {
      const href = safeHttpUrl(message.url);
      li.append(
        href
          ? el("p", {}, el("a", { href, target: "_blank", rel: "noopener noreferrer", text: message.url }))
          : el("p", { className: "meta", text: message.url }),
      );
    } else if (message.requestedSchema) {
      const names = Object.keys(message.requestedSchema.properties || {});
      li.append(el("p", { className: "meta", text: `Form: ${names.join(", ")}` }));
    }
  } else if (message.kind === "answer" && message.answer) {
    li.append(el("p", { className: "meta", text: `Action: ${message.answer.action}` }));
    if (message.answer.content !== undefined) {
      li.append(el("pre", { className: "json", text: json(message.answer.content) }));
    }
  } else if (message.kind === "siteCall") {
    li.append(
      el("p", { className: "meta", text: `${message.tool} on ${message.site}` }),
      el("pre", { className: "json", text: json(message.arguments) }),
    );
  }
  if (message.attachments && message.attachments.length) {
    const list = el("ul", { className: "list attachments" });
    list.setAttribute("aria-label", "Files of this message");
    for (const a of message.attachments) list.append(attachmentItem(taskId, a));
    li.append(list);
  }
  return li;
}

async function sendReply(event) {
  event.preventDefault();
  const taskId = state.taskId;
  const button = event.submitter || $("reply-form").querySelector("button");
  button.disabled = true;
  try {
    const attachments = await readFiles($("reply-files"));
    const body = { text: $("reply-text").value };
    if (attachments.length) body.attachments = attachments;
    await api("POST", ws(`/tasks/${seg(taskId)}/messages`), body);
    $("reply-form").reset();
    clearError();
    announce(`Reply sent${attachments.length ? ` with ${attachments.length} file(s)` : ""}.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Sending the reply failed");
  } finally {
    button.disabled = false;
  }
}

async function setStatus(event) {
  event.preventDefault();
  const status = $("status-select").value;
  try {
    const task = await api("PATCH", ws(`/tasks/${seg(state.taskId)}`), { status });
    clearError();
    announce(`Status of ${task.title} set to ${STATUS_NAMES[task.status] || task.status}.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Changing the status failed");
  }
}

// -- memory, skills, pano -------------------------------------------------------------------------

function pickList(listId, items, key, label, describe, open, selected) {
  reconcile(
    $(listId),
    items,
    key,
    (item) => {
      const li = el("li");
      const button = el("button", { type: "button", className: "linkish" });
      button.addEventListener("click", () => open(li.dataset.key));
      li.append(button, el("p", { className: "meta" }));
      return li;
    },
    undefined,
  );
  Array.from($(listId).children).forEach((li, i) => {
    const item = items[i];
    const button = li.querySelector("button");
    button.textContent = label(item);
    if (String(key(item)) === selected) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
    li.querySelector(".meta").textContent = describe(item);
  });
}

async function refreshMemory(current) {
  const memories = await api("GET", ws("/memory"));
  if (!current()) return;
  pickList(
    "memory-list",
    memories,
    (m) => m.name,
    (m) => m.name,
    (m) => `revision ${m.revision} · ${formatSize(m.size)} · ${when(m.updatedAt)}`,
    openMemory,
    state.memoryName,
  );
  setEmpty("memory-empty", memories.length === 0);
}

async function openMemory(name) {
  state.memoryName = name;
  try {
    const memory = await api("GET", ws(`/memory/${seg(name)}`));
    $("memory-doc-h").textContent = memory.name;
    $("memory-meta").textContent = `${memory.uri} · revision ${memory.revision} · ${when(memory.updatedAt)}`;
    $("memory-content").textContent = memory.content;
    $("memory-detail").hidden = false;
    $("memory-doc-h").focus();
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, `Reading memory ${name} failed`);
  }
}

async function refreshSkills(current) {
  const skills = await api("GET", ws("/skills"));
  if (!current()) return;
  pickList(
    "skills-list",
    skills,
    (s) => s.name,
    (s) => s.name,
    (s) => `${s.description}${s.sharedIn ? " · shared in, read-only" : ""}`,
    openSkill,
    state.skillName,
  );
  setEmpty("skills-empty", skills.length === 0);
}

async function openSkill(name) {
  state.skillName = name;
  try {
    const skill = await api("GET", ws(`/skills/${seg(name)}`));
    $("skill-h").textContent = skill.name;
    const shared = skill.sharedWith && skill.sharedWith.length ? ` · shared with ${skill.sharedWith.join(", ")}` : "";
    $("skill-meta").textContent = `${skill.description} · updated ${when(skill.updatedAt)}${shared}`;
    $("skill-content").textContent = skill.content;
    const prefix = `skill://${skill.name}/`;
    const files = (skill.files || []).map((uri) => (uri.startsWith(prefix) ? uri.slice(prefix.length) : uri));
    $("skill-files").replaceChildren(
      ...files.map((path) => {
        const button = el("button", { type: "button", className: "linkish", text: path });
        button.addEventListener("click", () => openSkillFile(skill.name, path));
        return el("li", {}, button);
      }),
    );
    if (!files.length) $("skill-files").append(el("li", { className: "meta", text: "None." }));
    $("skill-file").hidden = true;
    $("skill-detail").hidden = false;
    $("skill-h").focus();
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, `Reading skill ${name} failed`);
  }
}

async function openSkillFile(name, path) {
  try {
    const encoded = path.split("/").map(seg).join("/");
    const file = await api("GET", ws(`/skills/${seg(name)}/files/${encoded}`));
    $("skill-file-h").textContent = file.path;
    $("skill-file-content").textContent = file.content;
    $("skill-file").hidden = false;
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, `Reading ${path} failed`);
  }
}

async function refreshPano(current) {
  const docs = await api("GET", "/api/pano");
  if (!current()) return;
  pickList(
    "pano-list",
    docs,
    (d) => d.id,
    (d) => d.title,
    (d) => `${d.color} · by ${d.author} · ${d.commentCount} comment(s) · expires ${when(d.expiresAt)}`,
    openPano,
    state.panoId,
  );
  setEmpty("pano-empty", docs.length === 0);
}

async function openPano(id, keepFocus = false) {
  state.panoId = id;
  try {
    const doc = await api("GET", `/api/pano/${seg(id)}`);
    $("pano-doc-h").textContent = doc.title;
    $("pano-meta").textContent = `${doc.color} · by ${doc.author}, last saved by ${doc.updatedBy} · ${when(
      doc.updatedAt,
    )} · expires ${when(doc.expiresAt)}`;
    $("pano-markdown").textContent = doc.markdown;
    const files = [...(doc.files || []), ...(doc.attachments || [])];
    $("pano-files").replaceChildren(
      ...files.map((f) => {
        const href = safeHttpUrl(f.url);
        const name = href
          ? el("a", { href, target: "_blank", rel: "noopener noreferrer", text: f.name })
          : el("span", { text: f.name });
        return el("li", {}, name, el("span", { className: "meta", text: ` ${formatSize(f.size)} · ${f.mimeType}` }));
      }),
    );
    if (!files.length) $("pano-files").append(el("li", { className: "meta", text: "None." }));
    $("pano-comments").replaceChildren(
      ...(doc.comments || []).map((c) =>
        el("li", {}, el("p", { className: "meta" }, el("strong", { text: c.by }), " · ", timeEl(c.createdAt)),
          el("p", { className: "text", text: c.comment })),
      ),
    );
    if (!(doc.comments || []).length) $("pano-comments").append(el("li", { className: "meta", text: "None yet." }));
    $("pano-detail").hidden = false;
    if (!keepFocus) $("pano-doc-h").focus();
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Reading the pano doc failed");
  }
}

async function addComment(event) {
  event.preventDefault();
  try {
    await api("POST", `/api/pano/${seg(state.panoId)}/comments`, { comment: $("pano-comment").value });
    $("pano-comment").value = "";
    clearError();
    announce("Comment added.");
    await openPano(state.panoId, true);
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Adding the comment failed");
  }
}

// -- views --------------------------------------------------------------------------------------

function setView(view) {
  state.view = view;
  for (const button of document.querySelectorAll("nav.views button")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === view));
  }
  for (const name of ["tasks", "memory", "skills", "pano"]) $(`view-${name}`).hidden = name !== view;
  kick();
}

// -- start --------------------------------------------------------------------------------------

function wire() {
  buildStatusFilter();
  $("signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("token-input").value.trim();
    if (!token) {
      showError(new Error("paste a human token first"), "Sign-in");
      $("token-input").focus();
      return;
    }
    const button = $("signin-form").querySelector("button");
    button.disabled = true;
    try {
      await signIn(token);
    } finally {
      button.disabled = false;
    }
  });
  $("sign-out").addEventListener("click", () => signOut());
  $("workspace-select").addEventListener("change", (event) => {
    hideCreated();
    selectWorkspace(event.target.value || null);
  });
  $("workspace-form").addEventListener("submit", createWorkspace);
  $("copy-token").addEventListener("click", () => copyFrom($("created-token"), "The agent token"));
  $("copy-snippet").addEventListener("click", () => copyFrom($("created-snippet"), "The .mcp.json snippet"));
  $("created-done").addEventListener("click", () => {
    hideCreated();
    announce("The agent token is no longer shown.");
    $("workspace-h").focus();
  });
  $("assignee-filter").addEventListener("change", () => {
    $("tasks-list").replaceChildren();
    kick();
  });
  $("task-form").addEventListener("submit", createTask);
  $("task-close").addEventListener("click", closeTask);
  $("reply-form").addEventListener("submit", sendReply);
  $("status-form").addEventListener("submit", setStatus);
  $("pano-comment-form").addEventListener("submit", addComment);
  for (const button of document.querySelectorAll("nav.views button")) {
    button.addEventListener("click", () => setView(button.dataset.view));
  }
  // The token lives in this tab's sessionStorage only, never localStorage: a reload keeps it, a new tab does not.
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved);
  else $("token-input").focus();
}

wire();
