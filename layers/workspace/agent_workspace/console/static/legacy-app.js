// Agent Workspace console: the human's side of the REST API, in plain ES2020.
//
// Rules this file keeps: data from the server (written by agents, so untrusted) only ever reaches the
// page through textContent, attributes set one by one, and links whose scheme is checked; no
// innerHTML. The human token lives in sessionStorage only. Lists refresh by polling, one request
// round at a time, and are reconciled by id so a form being filled in is never replaced.
//
// The page is a board: what needs the human heads it (Claude Code's tool permission requests, questions,
// blockers, site-tool calls, proposals to triage, deliveries to review), the columns sit side by side
// (stacked on a narrow screen), and one task panel holds both sides of a task, the board's (criteria, links,
// activity, comments, decisions) and AgentRQ's (conversation, status).
// `#/workspaces/<workspaceId>/tasks/<taskId>` opens a task.
// The account's agents have a view of their own (agents.js): `#/agents`, `#/agents/<agentId>`. The tool
// permission requests have a module of their own too (permissions.js), and so have the apps signed in to the
// workspace over OAuth (apps.js). The API client and `el` live in core.js, shared with the consent page.

import { createAgents } from "./agents.js";
import { createPermissions } from "./permissions.js";
import { createBrowserPanel } from "./browser.js";
import { createNotifications } from "./notify.js";
import { createConnectedApps } from "./apps.js";
import { TOKEN_KEY, ApiError, request, el, wireSignIn } from "./core.js";

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
// The board's columns, left to right (GET /board lists the same, with what each means).
const COLUMNS = [
  ["triage", "Triage"],
  ["backlog", "Backlog"],
  ["ready", "Ready"],
  ["in_progress", "In progress"],
  ["blocked", "Blocked"],
  ["in_review", "In review"],
  ["done", "Done"],
  ["rejected", "Rejected"],
];
const COLUMN_NAMES = Object.fromEntries(COLUMNS);
const PRIORITY_NAMES = { urgent: "Urgent", high: "High", medium: "Medium", low: "Low", none: "No priority" };
const LINK_NAMES = {
  blocks: "Blocks",
  blocked_by: "Blocked by",
  relates_to: "Relates to",
  duplicate_of: "Duplicate of",
  duplicated_by: "Duplicated by",
};
const COLUMN_READ = 100; // tasks shown per column at most
const COLUMN_PAGES = 4; // pages read per column and round at most (a page may hold fewer than asked)
const TASK_ID = /^[0-9A-Za-z]{11}$/;
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
  identifiers: new Map(), // task id → "WS-42", as far as seen
  board: null, // GET /board: policy, labels, projects, epics, the active cycle
  cycles: [],
  filterKey: "", // the board filters the columns were last read with
  needs: { permissions: 0, questions: 0, calls: 0, blockers: 0, triage: 0, reviews: 0 },
  detail: null, // GET /board/tasks/{id} of the open task
  seenQuestions: null, // ids known at the last refresh; null before the first one
  seenCalls: null,
  seenNeeds: null,
};

// -- the API ------------------------------------------------------------------------------------

/** The REST API, with the signed-in human's token unless another is given (signing in). */
function api(method, path, body, token = state.token) {
  return request(method, path, body, token);
}

const seg = encodeURIComponent;
// An attachment id is any string: percent-encoded, and a segment of only dots too, which URL parsers would drop.
const linkSegment = (value) => (value === "." || value === ".." ? value.replaceAll(".", "%2E") : seg(value));
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

/** Remember a task's title and identifier, to name it where only its id is known (links, questions). */
function learnTask(task) {
  if (!task || !task.id) return;
  state.taskTitles.set(task.id, task.title);
  if (task.identifier) state.identifiers.set(task.id, task.identifier);
}

function taskLabel(taskId) {
  const ident = state.identifiers.get(taskId);
  return ident ? `${ident} ${taskTitle(taskId)}` : taskTitle(taskId);
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
        ws(`/tasks/${seg(taskId)}/attachments/${linkSegment(attachment.id)}?format=url`),
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
  const route = routeFromHash(); // a link to a task: read before selecting a workspace clears the address
  const agentsRoute = agents.routeFromHash();
  const remembered = sessionStorage.getItem(WORKSPACE_KEY);
  const pick =
    workspaces.find((w) => route && w.id === route.workspaceId) ||
    workspaces.find((w) => w.id === remembered) ||
    workspaces[0];
  selectWorkspace(pick ? pick.id : null);
  announce(`Signed in. ${workspaces.length} workspace${workspaces.length === 1 ? "" : "s"}.`);
  $("workspace-h").setAttribute("tabindex", "-1");
  $("workspace-h").focus();
  if (route) await applyRoute(route);
  else if (agentsRoute) agents.applyRoute(agentsRoute);
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
    seenNeeds: null,
    board: null,
    cycles: [],
    detail: null,
  });
  state.taskTitles.clear();
  state.identifiers.clear();
  clearBoardTask();
  resetFilters();
  hideCreated();
  agents.reset();
  permissions.reset();
  connectedApps.reset();
  setView("tasks");
  for (const id of ["questions-list", "calls-list", "tasks-list", "conversation", "memory-list", "skills-list",
    "pano-list", "workspace-select", ...BOARD_LISTS]) {
    $(id).replaceChildren();
  }
  setRoute(null);
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
  state.seenNeeds = null;
  if (id) sessionStorage.setItem(WORKSPACE_KEY, id);
  else sessionStorage.removeItem(WORKSPACE_KEY);
  $("workspace-select").value = id || "";
  const workspace = state.workspaces.find((w) => w.id === id);
  $("workspace-info").hidden = !workspace;
  $("workspace-title").textContent = workspace ? workspace.title : "";
  $("workspace-mission").textContent = workspace ? workspace.mission || "No mission set." : "";
  $("workspace-id").textContent = workspace ? `id ${workspace.id}` : "";
  for (const list of ["questions-list", "calls-list", "tasks-list", "conversation", "memory-list", "skills-list",
    ...BOARD_LISTS]) {
    $(list).replaceChildren();
  }
  for (const detail of ["task-detail", "memory-detail", "skill-detail"]) $(detail).hidden = true;
  const parts = ["permissions", "questions", "site-calls", "task-form", "needs-you", "board", "board-settings"];
  for (const part of parts) $(part).hidden = !id;
  state.board = null;
  state.cycles = [];
  state.identifiers.clear();
  clearBoardTask();
  resetFilters();
  for (const kind of ["questions", "calls", ...NEEDS_KINDS]) setNeeds(kind, 0);
  permissions.reset();
  connectedApps.reset();
  setRoute(null);
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

// Each reference's tools on a path of its own (mcp_server/surfaces.py), all with the same tokens and sign-in.
const MCP_PATHS = [
  ["/mcp", "the nine action tools (task, memory, skills, workspace, siteTools, pano, board, agent, help)"],
  ["/mcp/agentrq", "AgentRQ's seven tools"],
  ["/mcp/masaro", "Masaro's 19 task-board tools, by their names"],
  ["/mcp/omr", "On My Radar's 21 Agent Repo tools, by their names"],
];

function showMcpUrls() {
  $("mcp-urls").replaceChildren(
    ...MCP_PATHS.flatMap(([path, what]) => [
      el("dt", {}, el("code", { text: `${window.location.origin}${path}` })),
      el("dd", { text: what }),
    ]),
  );
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

const poller = { generation: 0, timer: null, running: false, again: false, rounds: 0, kicked: false };
// The board (eight column listings and its context) costs most of a round: a round that a timer started
// reads it every BOARD_EVERY rounds; one a change or a click started reads it at once.
const BOARD_EVERY = 3;

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
  poller.kicked = true;
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
  const full = poller.kicked || poller.rounds % BOARD_EVERY === 0;
  poller.kicked = false;
  try {
    await refreshVisible(current, full);
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

async function refreshVisible(current, full = true) {
  const jobs = [refreshWorkspaces];
  if (state.workspaceId) jobs.push(permissions.refresh, refreshQuestions, refreshCalls, refreshNeedsYou);
  if (state.workspaceId && full) jobs.push(refreshBoardMeta, connectedApps.refresh);
  if (full) jobs.push(browserPanel.refresh);
  if (state.view === "tasks" && state.workspaceId) jobs.push(refreshTasks, refreshCounts);
  if (state.view === "tasks" && state.workspaceId && full) jobs.push(refreshColumns);
  if (state.view === "tasks" && state.workspaceId && state.taskId) jobs.push(refreshTask, refreshBoardTask);
  if (state.view === "memory" && state.workspaceId) jobs.push(refreshMemory);
  if (state.view === "skills" && state.workspaceId) jobs.push(refreshSkills);
  if (state.view === "pano") jobs.push(refreshPano);
  if (state.view === "agents") jobs.push((current) => agents.refresh(current, full));
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
  setNeeds("questions", questions.length);
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
            if (current()) learnTask(task);
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
  const heading = el("h4", { id: headingId, text: question.message });
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
    setNeeds("questions", left);
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
  const target = (next && next.querySelector("h4")) || $(headingId);
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
  setNeeds("calls", calls.length);
  if (fresh.length === 1) announce(`The agent wants to run ${fresh[0].tool} on ${fresh[0].site}.`);
  else if (fresh.length > 1) announce(`${fresh.length} new site-tool calls wait for your decision.`);
}

function callCard(call) {
  const headingId = nextId("c");
  const card = el("article", { className: "item site-call" });
  card.setAttribute("aria-labelledby", headingId);
  card.append(
    el("h4", { id: headingId, text: `${call.tool} on ${call.site}` }),
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
    setNeeds("calls", left);
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
  for (const task of tasks) learnTask(task);
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

let openedFrom = null; // the control that opened the task panel, where focus goes back on closing it

function openTask(taskId) {
  if (state.view !== "tasks") setView("tasks");
  const changed = state.taskId !== taskId;
  state.taskId = taskId;
  if (document.activeElement && document.activeElement !== document.body && !$("task-detail").contains(
    document.activeElement)) {
    openedFrom = document.activeElement;
  }
  if (changed) {
    $("conversation").replaceChildren();
    $("task-h").textContent = taskTitle(taskId);
    $("task-facts").replaceChildren();
    $("task-body-text").textContent = "";
    $("task-attachments").replaceChildren();
    $("reply-form").reset();
    clearBoardTask();
  }
  for (const li of $("tasks-list").children) {
    const b = li.querySelector(".task-open");
    if (li.dataset.key === taskId) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  markOpenCard();
  setRoute(taskId);
  $("task-detail").hidden = false;
  $("task-h").focus();
  kick();
}

function closeTask() {
  const id = state.taskId;
  state.taskId = null;
  state.detail = null;
  $("task-detail").hidden = true;
  $("conversation").replaceChildren();
  clearBoardTask();
  markOpenCard();
  setRoute(null);
  const from = openedFrom;
  openedFrom = null;
  if (from && from.isConnected && !from.closest("[hidden]")) {
    from.focus();
    return;
  }
  const card = Array.from(document.querySelectorAll("#board-columns li")).find((li) => li.dataset.key === id);
  const back = Array.from($("tasks-list").children).find((li) => li.dataset.key === id);
  if (card) card.querySelector("button").focus();
  else if (back) back.querySelector("button").focus();
  else $("tasks-h").focus();
}

/** A task the page was asked to show is gone (or never was): say so and close its panel. */
function taskGone(taskId, error) {
  if (!(error instanceof ApiError) || error.status !== 404) return false;
  if (state.taskId === taskId) {
    closeTask();
    showError(error, "Opening the task failed");
  }
  return true; // or closed already (the panel's other request saw it first), or another task is open now
}

async function refreshTask(current) {
  const taskId = state.taskId;
  let task;
  try {
    task = await api("GET", ws(`/tasks/${seg(taskId)}?limit=200`));
  } catch (error) {
    if (current() && taskGone(taskId, error)) return;
    throw error;
  }
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
  learnTask(task);
  $("task-h").textContent = task.title;
  const facts = $("task-facts");
  const rows = [];
  if (task.identifier) rows.push(["Identifier", task.identifier]);
  if (task.column) rows.push(["Column", COLUMN_NAMES[task.column] || task.column]);
  rows.push(
    ["Status", STATUS_NAMES[task.status] || task.status],
    ["Assignee", task.assignee],
    ["Created by", task.createdBy],
    ["Created", when(task.createdAt)],
    ["Updated", when(task.updatedAt)],
  );
  if (task.priority) rows.push(["Priority", PRIORITY_NAMES[task.priority] || task.priority]);
  if (task.complexity) rows.push(["Complexity", task.complexity]);
  if (task.labels && task.labels.length) rows.push(["Labels", task.labels.join(", ")]);
  if (task.dueDate) rows.push(["Due", task.dueDate]);
  if (task.projectId) rows.push(["Project", headingTitle("projects", task.projectId)]);
  if (task.epicId) rows.push(["Epic", headingTitle("epics", task.epicId)]);
  if (task.cycleId) rows.push(["Cycle", cycleTitle(task.cycleId)]);
  if (task.parentId) rows.push(["Parent", taskLabel(task.parentId)]);
  if (task.assignedTo) rows.push(["Assigned to agent token", task.assignedTo]);
  if (task.cronSchedule) rows.push(["Cron", `${task.cronSchedule}${task.timezone ? ` (${task.timezone})` : ""}`]);
  if (task.claim) rows.push(["Claimed", when(task.claim.claimedAt)]);
  if (task.claim && task.claim.leaseExpiresAt) rows.push(["Claim lease until", when(task.claim.leaseExpiresAt)]);
  if (task.archived) rows.push(["Archived", `${when(task.archived.at)}: ${task.archived.reason}`]);
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

// -- the "needs you" list -------------------------------------------------------------------------

const NEEDS_KINDS = ["blockers", "triage", "reviews"];
const BOARD_LISTS = [
  "blockers-list",
  "triage-list",
  "reviews-list",
  ...COLUMNS.map(([column]) => `cards-${column}`),
];
const PANEL_LISTS = [
  "task-questions",
  "task-criteria",
  "task-suggestions",
  "task-links",
  "task-waiting",
  "task-comments",
  "task-activity",
  "task-actions",
];

function setNeeds(kind, n) {
  state.needs[kind] = n;
  const total = Object.values(state.needs).reduce((sum, k) => sum + k, 0);
  $("needs-count").textContent = total ? `(${total})` : "";
}

const NEEDS_NEWS = {
  blockers: (t) =>
    `${t.identifier} ${t.title} is blocked: the agent asks you ${(t.questions || []).length} question(s).`,
  triage: (t) => `${t.identifier} ${t.title} was proposed: accept or decline it.`,
  reviews: (t) => `${t.identifier} ${t.title} was delivered: approve it or send it back.`,
};

async function refreshNeedsYou(current) {
  const needs = await api("GET", ws("/board/needs-you"));
  if (!current()) return;
  const seen = new Set();
  const fresh = [];
  for (const kind of NEEDS_KINDS) {
    const tasks = Array.isArray(needs[kind]) ? needs[kind] : [];
    for (const task of tasks) {
      learnTask(task);
      seen.add(`${kind}:${task.id}`);
      if (state.seenNeeds && !state.seenNeeds.has(`${kind}:${task.id}`)) fresh.push(NEEDS_NEWS[kind](task));
    }
    const update = (li, task) => updateNeedsItem(li, task, kind);
    reconcile($(`${kind}-list`), tasks, (t) => t.id, (task) => needsItem(task, update), update);
    setEmpty(`${kind}-empty`, tasks.length === 0);
    $(`${kind}-count`).textContent = tasks.length ? `(${tasks.length})` : "";
    setNeeds(kind, tasks.length);
  }
  state.seenNeeds = seen;
  if (fresh.length === 1) announce(fresh[0]);
  else if (fresh.length > 1) announce(`${fresh.length} new tasks need you.`);
  markOpenCard();
}

function needsItem(task, update) {
  const li = el("li", { className: "needs-item" });
  const open = el("button", { type: "button", className: "linkish card-open" });
  open.addEventListener("click", () => openTask(li.dataset.key));
  li.append(open, el("p", { className: "meta" }), el("div", { className: "needs-extra" }));
  update(li, task);
  return li;
}

function updateNeedsItem(li, task, kind) {
  li.querySelector(".card-open").textContent = task.title;
  const meta = [task.identifier || "", task.priority && task.priority !== "none" ? PRIORITY_NAMES[task.priority] : ""];
  if (kind === "triage") meta.push(`proposed by ${task.createdBy}`);
  li.querySelector(".meta").replaceChildren(meta.filter(Boolean).join(" · "), " · ", timeEl(task.updatedAt));
  const extra = li.querySelector(".needs-extra");
  if (kind === "blockers" && Array.isArray(task.questions) && task.questions.length) {
    const asks = el("ol", { className: "asks" });
    asks.setAttribute("aria-label", `Asked in ${task.identifier || task.title}`);
    for (const question of task.questions) asks.append(el("li", { text: question }));
    extra.replaceChildren(asks);
  } else if (kind === "reviews" && task.delivery && task.delivery.summary) {
    extra.replaceChildren(el("p", { className: "text clip", text: task.delivery.summary }));
  } else {
    extra.replaceChildren();
  }
}

/** The open task's cards and items are marked current wherever they show. */
function markOpenCard() {
  for (const button of document.querySelectorAll("#board-columns .card-open, #needs-you .card-open")) {
    const li = button.closest("li");
    if (li && li.dataset.key === state.taskId) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

// -- the board: policy, cycles, filters and columns -------------------------------------------------

let policyGeneration = 0; // bumped by each change the human makes: a listing read before it is stale

async function refreshBoardMeta(current) {
  const generation = policyGeneration;
  const [board, cycles] = await Promise.all([api("GET", ws("/board")), api("GET", ws("/board/cycles"))]);
  if (!current()) return;
  state.board = board;
  state.cycles = Array.isArray(cycles) ? cycles : [];
  if (generation === policyGeneration) renderPolicy(board.policy);
  renderCycles(board.activeCycle);
  fillSelect($("filter-label"), [["", "Any label"], ...(board.labels || []).map((l) => [l, l])]);
  fillSelect($("filter-project"), [["", "Any project"], ...(board.projects || []).map((p) => [p.id, p.title])]);
  fillSelect($("filter-epic"), [["", "Any epic"], ...(board.epics || []).map((e) => [e.id, e.title])]);
  fillSelect($("heading-select"), [
    ["", "Choose one"],
    ...(board.projects || []).map((p) => [`projects/${p.id}`, `Project: ${p.title}`]),
    ...(board.epics || []).map((e) => [`epics/${e.id}`, `Epic: ${e.title}`]),
  ]);
  fillSelect($("filter-cycle"), [
    ["", "Any cycle"],
    ["active", "The active cycle"],
    ...state.cycles.map((c) => [c.id, c.title]),
  ]);
}

/** A select's options from [value, text] pairs, kept by value (the one chosen stays chosen). */
function fillSelect(select, options) {
  reconcile(
    select,
    options,
    ([value]) => value,
    ([value, text]) => el("option", { value, text }),
    (node, [, text]) => {
      if (node.textContent !== text) node.textContent = text;
    },
  );
}

function renderPolicy(policy) {
  if (!policy) return;
  $("policy-supervised").checked = Boolean(policy.supervised);
  $("policy-signoff").checked = Boolean(policy.signOff);
}

async function setPolicy(field, checkbox, name, meaning) {
  policyGeneration += 1;
  const wanted = checkbox.checked;
  try {
    const policy = await api("PUT", ws("/board/policy"), { [field]: wanted });
    policyGeneration += 1;
    renderPolicy(policy);
    clearError();
    announce(`${name} ${wanted ? "on" : "off"}: ${meaning(wanted)}`);
    kick();
  } catch (error) {
    checkbox.checked = !wanted;
    if (!handleAuthFailure(error)) showError(error, `Changing the ${name.toLowerCase()} policy failed`);
  }
}

function cycleTitle(cycleId) {
  const cycle = state.cycles.find((c) => c.id === cycleId);
  return cycle ? cycle.title : cycleId;
}

function headingTitle(kind, id) {
  const found = state.board && Array.isArray(state.board[kind]) ? state.board[kind].find((h) => h.id === id) : null;
  return found ? found.title : id;
}

function renderCycles(active) {
  let text = "No cycle is active.";
  if (active) {
    text = `Active cycle: ${active.title}${active.goal ? ` (${active.goal})` : ""}`;
    if (active.endDate) text += `, ends ${active.endDate}`;
  }
  $("cycle-active").textContent = text;
  $("board-cycle").textContent = text;
  const select = $("cycle-select");
  const choices = state.cycles.map((c) => [c.id, c.endDate ? `${c.title} (ends ${c.endDate})` : c.title]);
  fillSelect(select, [["", "None"], ...choices]);
  const activeId = active ? active.id : "";
  if (document.activeElement !== select && select.dataset.for !== activeId) {
    select.value = activeId;
    select.dataset.for = activeId;
  }
}

async function setActiveCycle(event) {
  event.preventDefault();
  const cycleId = $("cycle-select").value || null;
  try {
    await api("PUT", ws("/board/cycles/active"), { cycleId });
    $("cycle-select").dataset.for = "";
    clearError();
    announce(cycleId ? `${cycleTitle(cycleId)} is the active cycle.` : "No cycle is active now.");
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Setting the active cycle failed");
  }
}

async function createCycle(event) {
  event.preventDefault();
  const body = { title: $("cycle-title").value, goal: $("cycle-goal").value, active: $("cycle-make-active").checked };
  if ($("cycle-end").value) body.endDate = $("cycle-end").value;
  try {
    const cycle = await api("POST", ws("/board/cycles"), body);
    $("cycle-form").reset();
    $("new-cycle").open = false;
    $("cycle-select").dataset.for = "";
    clearError();
    announce(`Cycle ${cycle.title} created${cycle.active ? ", and it is the active one" : ""}.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Creating the cycle failed");
  }
}

// A project or an epic, as the select names it ("projects/<id>" or "epics/<id>"): renamed or deleted. A project's
// edit names the revision it read (PATCH refuses a stale one); an epic's last edit wins.
async function renameHeading(event) {
  event.preventDefault();
  const chosen = $("heading-select").value;
  const title = $("heading-title").value;
  if (!chosen || !title.trim()) return;
  try {
    const body = { title };
    if (chosen.startsWith("projects/")) body.expectedRevision = (await api("GET", ws(`/${chosen}`))).revision;
    await api("PATCH", ws(`/${chosen}`), body);
    $("heading-form").reset();
    clearError();
    announce(`Renamed to ${title}.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Renaming failed");
  }
}

async function deleteHeading() {
  const select = $("heading-select");
  const chosen = select.value;
  if (!chosen) return;
  const name = select.options[select.selectedIndex].textContent;
  if (!window.confirm(`Delete ${name}? Its tasks keep their link to it; no new task can name it.`)) return;
  try {
    await api("DELETE", ws(`/${chosen}`));
    $("heading-form").reset();
    clearError();
    announce(`${name} deleted.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Deleting failed");
  }
}

function buildBoard() {
  const holder = $("board-columns");
  for (const [column, name] of COLUMNS) {
    const headingId = `col-h-${column}`;
    const section = el("section", { id: `board-col-${column}`, className: `board-col col-${column}` });
    section.setAttribute("aria-labelledby", headingId);
    section.dataset.column = column;
    section.append(
      el(
        "h3",
        { id: headingId },
        el("span", { text: name }),
        " ",
        el("span", { className: "count", id: `col-count-${column}` }),
      ),
      el("p", { className: "empty", id: `col-empty-${column}`, text: "Nothing here." }),
      el("ul", { id: `cards-${column}`, className: "cards", "aria-label": name }),
      el("p", { className: "meta", id: `col-more-${column}`, hidden: true, text: `The newest ${COLUMN_READ} shown.` }),
    );
    holder.append(section);
  }
}

function currentFilters() {
  const params = new URLSearchParams();
  const query = $("filter-query").value.trim();
  if (query) params.set("query", query);
  for (const [id, name] of [
    ["filter-label", "label"],
    ["filter-project", "projectId"],
    ["filter-epic", "epicId"],
    ["filter-cycle", "cycleId"],
  ]) {
    if ($(id).value) params.set(name, $(id).value);
  }
  if ($("filter-archived").checked) params.set("includeArchived", "true");
  return params.toString();
}

let filterTimer = null;

function applyFilters() {
  clearTimeout(filterTimer);
  filterTimer = null;
  const wanted = currentFilters();
  if (wanted === state.filterKey) return;
  state.filterKey = wanted;
  announce(wanted ? "Filtering the board…" : "Showing the whole board…");
  kick();
}

function resetFilters() {
  clearTimeout(filterTimer);
  filterTimer = null;
  $("board-filters").reset();
  state.filterKey = "";
}

async function readColumn(column, filters, current) {
  const tasks = [];
  let cursor = null;
  let pages = 0;
  do {
    const params = new URLSearchParams(filters);
    params.set("status", column);
    params.set("limit", String(COLUMN_READ - tasks.length));
    if (cursor) params.set("cursor", cursor);
    const page = await api("GET", ws(`/board/tasks?${params}`));
    tasks.push(...(page.tasks || []));
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor && tasks.length < COLUMN_READ && pages < COLUMN_PAGES && current());
  return { tasks: tasks.slice(0, COLUMN_READ), more: Boolean(cursor) };
}

async function refreshColumns(current) {
  const filters = state.filterKey;
  const wantsActive = new URLSearchParams(filters).get("cycleId") === "active";
  const nothing = () => COLUMNS.map(() => ({ tasks: [], more: false }));
  const noCycle = "No cycle is active, so no task is in the active cycle.";
  let read;
  let note = "";
  if (wantsActive && state.board && !state.board.activeCycle) {
    read = nothing();
    note = noCycle;
  } else {
    try {
      read = await Promise.all(COLUMNS.map(([column]) => readColumn(column, filters, current)));
    } catch (error) {
      // The active cycle ended since the board was last read: the filter matches nothing, which is no failure.
      if (!(wantsActive && error instanceof ApiError && error.status === 422)) throw error;
      read = nothing();
      note = noCycle;
    }
  }
  if (!current() || filters !== state.filterKey) return;
  let shown = 0;
  COLUMNS.forEach(([column], index) => {
    const { tasks, more } = read[index];
    shown += tasks.length;
    reconcile($(`cards-${column}`), tasks, (t) => t.id, boardCard, updateBoardCard);
    setEmpty(`col-empty-${column}`, tasks.length === 0);
    $(`col-count-${column}`).textContent = `(${tasks.length}${more ? "+" : ""})`;
    $(`col-more-${column}`).hidden = !more;
  });
  if (!note && filters) note = `Filtered: ${shown === 1 ? "1 task matches" : `${shown} tasks match`}.`;
  $("board-note").textContent = note;
  $("board-note").hidden = !note;
  markOpenCard();
}

function boardCard(task) {
  const li = el("li", { className: "board-card" });
  const metaId = nextId("card");
  const open = el("button", { type: "button", className: "card-open" });
  open.setAttribute("aria-describedby", metaId);
  open.addEventListener("click", () => openTask(li.dataset.key));
  li.append(open, el("p", { className: "meta card-meta", id: metaId }));
  updateBoardCard(li, task);
  return li;
}

function updateBoardCard(li, task) {
  learnTask(task);
  const priority = task.priority && task.priority !== "none" ? task.priority : "";
  li.className = `board-card${priority ? ` prio-${priority}` : ""}${task.archived ? " archived" : ""}`;
  const open = li.querySelector(".card-open");
  if (open.textContent !== task.title) open.textContent = task.title;
  const parts = [el("span", { className: "ident", text: task.identifier || "" })];
  if (priority) parts.push(el("span", { className: `badge prio prio-${priority}`, text: PRIORITY_NAMES[priority] }));
  for (const label of task.labels || []) parts.push(el("span", { className: "tag", text: label }));
  if (Array.isArray(task.questions) && task.questions.length) {
    const n = task.questions.length;
    parts.push(el("span", { className: "badge ask", text: `${n} question${n === 1 ? "" : "s"} for you` }));
  }
  if (Array.isArray(task.waitingOn) && task.waitingOn.length) {
    parts.push(el("span", { className: "badge", text: `waiting on ${task.waitingOn.length}` }));
  }
  if (task.archived) parts.push(el("span", { className: "badge", text: "archived" }));
  const meta = li.querySelector(".card-meta");
  meta.replaceChildren(...parts.flatMap((part, i) => (i ? [" ", part] : [part])));
}

async function createBoardTask(event) {
  event.preventDefault();
  const button = event.submitter || $("board-task-form").querySelector("button");
  const body = {
    title: $("bt-title").value,
    description: $("bt-description").value,
    column: $("bt-column").value,
  };
  const criteria = $("bt-criteria").value.split("\n").map((line) => line.trim()).filter(Boolean);
  if (criteria.length) body.criteria = criteria;
  if ($("bt-priority").value) body.priority = $("bt-priority").value;
  const labels = $("bt-labels").value.split(",").map((label) => label.trim()).filter(Boolean);
  if (labels.length) body.labels = labels;
  button.disabled = true;
  try {
    const task = await api("POST", ws("/board/tasks"), body);
    learnTask(task);
    $("board-task-form").reset();
    clearError();
    announce(`${task.identifier} ${task.title} added to ${COLUMN_NAMES[task.column] || task.column}.`);
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Adding the task to the board failed");
  } finally {
    button.disabled = false;
  }
}

// -- the task panel's board side: criteria, links, suggestions, activity, comments, decisions --------

function clearBoardTask() {
  state.detail = null;
  for (const id of PANEL_LISTS) $(id).replaceChildren();
  for (const id of ["task-blocked", "task-summary-box", "task-criteria-box", "task-delivery-box"]) $(id).hidden = true;
  $("task-suggestions-box").hidden = true;
  $("task-where").textContent = "";
  $("task-actions").dataset.for = "";
  $("comment-form").reset();
  $("link-form").reset();
  $("link-new").open = false;
}

async function refreshBoardTask(current) {
  const taskId = state.taskId;
  let detail;
  try {
    detail = await api("GET", ws(`/board/tasks/${seg(taskId)}`));
  } catch (error) {
    if (current() && taskGone(taskId, error)) return;
    throw error;
  }
  if (!current() || state.taskId !== taskId) return;
  const related = [...(detail.links || []).map((l) => l.taskId), ...(detail.waitingOn || []), detail.parentId];
  await learnTitles(related.filter(Boolean), current);
  if (!current() || state.taskId !== taskId) return;
  renderBoardTask(detail);
}

function renderBoardTask(task) {
  state.detail = task;
  learnTask(task);
  renderWhere(task);
  const asks = task.column === "blocked" && Array.isArray(task.questions) ? task.questions : [];
  $("task-blocked").hidden = asks.length === 0;
  const questions = $("task-questions");
  if (questions.children.length !== asks.length || asks.some((q, i) => questions.children[i].textContent !== q)) {
    questions.replaceChildren(...asks.map((q) => el("li", { text: q })));
  }
  renderActions(task);

  $("task-summary-box").hidden = !task.summary;
  $("task-summary").textContent = task.summary || "";

  const criteria = Array.isArray(task.criteria) ? task.criteria : [];
  $("task-criteria-box").hidden = criteria.length === 0;
  $("task-criteria").replaceChildren(...criteria.map(criterionItem));

  const delivery = task.delivery;
  $("task-delivery-box").hidden = !delivery;
  $("task-delivery-meta").replaceChildren(...(delivery ? [`By ${who(delivery.by)} · `, timeEl(delivery.at)] : []));
  $("task-delivery").textContent = delivery ? delivery.summary : "";

  const suggestions = Array.isArray(task.pendingSuggestions) ? task.pendingSuggestions : [];
  $("task-suggestions-box").hidden = suggestions.length === 0;
  reconcile($("task-suggestions"), suggestions, (s) => s.id, (s) => suggestionItem(task.id, s));

  const links = Array.isArray(task.links) ? task.links : [];
  reconcile($("task-links"), links, (l) => `${l.type}:${l.taskId}`, linkItem, updateLinkItem);
  setEmpty("task-links-empty", links.length === 0);
  const waiting = Array.isArray(task.waitingOn) ? task.waitingOn : [];
  reconcile(
    $("task-waiting"),
    waiting,
    (id) => id,
    (id) => linkItem({ taskId: id }),
    (li, id) => updateLinkItem(li, { taskId: id }),
  );
  $("task-waiting").hidden = waiting.length === 0;
  $("task-waiting-label").hidden = waiting.length === 0;

  const comments = Array.isArray(task.comments) ? task.comments : [];
  const before = $("task-comments").children.length;
  reconcile($("task-comments"), [...comments].reverse(), (c) => c.id, commentItem);
  setEmpty("task-comments-empty", comments.length === 0);
  if (before && comments.length > before) announce(`${comments.length - before} new comment(s) on ${task.title}.`);
  const activity = Array.isArray(task.activity) ? task.activity : [];
  reconcile($("task-activity"), activity, (e) => e.id, activityItem);
  setEmpty("task-activity-empty", activity.length === 0);
}

function who(by) {
  return by === "human" ? "you" : by === "agent" ? "the agent" : String(by);
}

function renderWhere(task) {
  const parts = [task.identifier || "", COLUMN_NAMES[task.column] || task.column || ""];
  if (task.archived) parts.push(`archived: ${task.archived.reason}`);
  $("task-where").textContent = parts.filter(Boolean).join(" · ");
}

function criterionItem(criterion) {
  const li = el("li", { className: "criterion" });
  let verdict = "not checked yet";
  let tone = "open";
  if (criterion.met === true) [verdict, tone] = ["met", "met"];
  else if (criterion.met === false) [verdict, tone] = ["not met", "unmet"];
  li.append(
    el("span", { className: "text", text: criterion.text }),
    " ",
    el("span", { className: `badge ${tone}`, text: verdict }),
  );
  if (criterion.note) li.append(el("p", { className: "meta", text: `Note: ${criterion.note}` }));
  return li;
}

function linkItem(link) {
  const li = el("li");
  const open = el("button", { type: "button", className: "linkish" });
  open.addEventListener("click", () => openTask(link.taskId));
  li.append(el("span", { className: "link-type" }), open);
  updateLinkItem(li, link);
  return li;
}

function updateLinkItem(li, link) {
  const type = link.type ? LINK_NAMES[link.type] || link.type.replace(/_/g, " ") : "";
  li.querySelector(".link-type").textContent = type ? `${type} ` : "";
  li.querySelector("button").textContent = taskLabel(link.taskId);
}

function suggestionItem(taskId, suggestion) {
  const headingId = nextId("sugg");
  const box = el("section", { className: "item suggestion" });
  box.setAttribute("aria-labelledby", headingId);
  box.append(el("h4", { id: headingId }, `From ${who(suggestion.by)} · `, timeEl(suggestion.at)));
  if (suggestion.summary) {
    box.append(
      el("p", { className: "label", text: "Summary" }),
      el("p", { className: "text", text: suggestion.summary }),
    );
  }
  if (Array.isArray(suggestion.criteria) && suggestion.criteria.length) {
    const list = el("ol", { className: "criteria" });
    for (const text of suggestion.criteria) list.append(el("li", { text }));
    box.append(el("p", { className: "label", text: "Acceptance criteria" }), list);
  }
  const actions = el("div", { className: "actions" });
  const accept = el("button", { type: "button", text: "Accept suggestion" });
  const discard = el("button", { type: "button", className: "secondary", text: "Discard suggestion" });
  accept.addEventListener("click", () => decideSuggestion(taskId, suggestion, true, box));
  discard.addEventListener("click", () => decideSuggestion(taskId, suggestion, false, box));
  actions.append(accept, discard);
  box.append(actions);
  return box;
}

async function decideSuggestion(taskId, suggestion, accept, box) {
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  const path = `/board/tasks/${seg(taskId)}/suggestions/${seg(suggestion.id)}`;
  try {
    await api(accept ? "POST" : "DELETE", ws(accept ? `${path}/accept` : path));
    const hadFocus = box.contains(document.activeElement);
    box.remove();
    if (hadFocus) $("task-h").focus();
    clearError();
    announce(accept ? "Suggestion accepted: the task has its summary and criteria." : "Suggestion discarded.");
    kick();
  } catch (error) {
    for (const b of box.querySelectorAll("button")) b.disabled = false;
    const context = accept ? "Accepting the suggestion failed" : "Discarding the suggestion failed";
    if (!handleAuthFailure(error)) showError(error, context);
    if (error instanceof ApiError && error.status === 409) kick();
  }
}

function commentItem(comment) {
  const from = comment.by === "human" ? "human" : "agent";
  const li = el("li", { className: `msg from-${from}` });
  const name = comment.by === "human" ? "You" : comment.by === "agent" ? "Agent" : String(comment.by);
  li.append(
    el("p", { className: "msg-head" }, el("strong", { text: name }), " · ", timeEl(comment.at)),
    el("p", { className: "text", text: comment.text }),
  );
  return li;
}

const ACTIVITY_NAMES = {
  created: "created it",
  edited: "edited it",
  claimed: "claimed it",
  released: "released it",
  progress: "reported progress",
  blocker: "reported a blocker",
  completed: "delivered it",
  approved: "approved it",
  "sent back": "sent it back",
  accepted: "accepted it",
  declined: "declined it",
  suggested: "suggested a summary or criteria",
  linked: "linked it",
  archived: "archived it",
  comment: "commented",
};

function activityItem(entry) {
  const li = el("li", { className: "entry" });
  const actor = entry.by === "human" ? "You" : entry.by === "agent" ? "The agent" : String(entry.by);
  let what = ACTIVITY_NAMES[entry.what] || String(entry.what);
  if (entry.column && COLUMN_NAMES[entry.column]) what += ` (${COLUMN_NAMES[entry.column]})`;
  if (entry.what === "linked" && entry.otherTaskId) {
    what += `: ${LINK_NAMES[entry.type] || entry.type || ""} ${taskLabel(entry.otherTaskId)}`;
  }
  li.append(el("p", { className: "msg-head" }, el("strong", { text: actor }), ` ${what} · `, timeEl(entry.at)));
  if (entry.text) li.append(el("p", { className: "text", text: entry.text }));
  if (Array.isArray(entry.questions) && entry.questions.length) {
    const asks = el("ol", { className: "asks" });
    for (const q of entry.questions) asks.append(el("li", { text: String(q) }));
    li.append(asks);
  }
  return li;
}

/** The decisions the task's column allows; rebuilt only when the column changes (a comment typed stays). */
function renderActions(task) {
  const box = $("task-actions");
  const key = `${task.id}:${task.column}:${task.archived ? "archived" : ""}:${task.claim ? "claimed" : ""}`;
  if (box.dataset.for === key) return;
  box.dataset.for = key;
  const parts = [];
  if (task.archived) {
    const { at, by, reason } = task.archived;
    parts.push(el("p", { className: "meta", text: `Archived ${when(at)} by ${who(by)}: ${reason}` }));
    box.replaceChildren(...parts);
    return;
  }
  if (task.column === "triage" || task.column === "in_review") {
    const triage = task.column === "triage";
    const commentId = nextId("decision");
    const comment = el("textarea", { id: commentId, rows: 2, className: "decision-comment" });
    parts.push(
      el("p", {
        className: "hint",
        text: triage
          ? "An agent proposed this task: accept it into a column, or decline it."
          : "Delivered: approve it (done), or send it back to ready saying what is missing.",
      }),
      el("label", {
        htmlFor: commentId,
        text: triage ? "Decision comment (optional)" : "Decision comment (required to send back)",
      }),
      comment,
    );
    const row = el("div", { className: "actions" });
    const choices = triage
      ? [["backlog", "Accept to backlog", ""], ["ready", "Accept to ready", ""], ["decline", "Decline", "danger"]]
      : [["approve", "Approve", ""], ["send_back", "Send back", "danger"]];
    for (const [decision, label, tone] of choices) {
      const button = el("button", { type: "button", className: tone, text: label });
      button.addEventListener("click", () => decideTask(task, triage ? "triage" : "review", decision, label, comment));
      row.append(button);
    }
    parts.push(row);
  }
  const row = el("div", { className: "actions" });
  if (task.column === "in_progress" || task.column === "blocked" || task.claim) {
    const release = el("button", { type: "button", className: "secondary", text: "Release" });
    release.setAttribute("aria-describedby", "release-hint");
    release.addEventListener("click", () =>
      act(`/board/tasks/${seg(task.id)}/release`, undefined, "Released: back in ready.", "Releasing the task failed"),
    );
    row.append(release);
  }
  if ((task.column === "backlog" || task.column === "ready") && !task.claim) {
    const to = task.column === "backlog" ? "ready" : "backlog";
    const name = COLUMN_NAMES[to];
    const move = el("button", { type: "button", className: "secondary", text: `Move to ${name.toLowerCase()}` });
    move.addEventListener("click", () =>
      act(`/board/tasks/${seg(task.id)}`, { column: to }, `Moved to ${name}.`, "Moving the task failed", "PATCH"),
    );
    row.append(move);
  }
  const archiveToggle = el("button", { type: "button", className: "secondary", text: "Archive…" });
  archiveToggle.setAttribute("aria-expanded", "false");
  row.append(archiveToggle);
  parts.push(row);
  if (task.column === "in_progress" || task.column === "blocked" || task.claim) {
    const hint = "Release takes the task back from the agent: it returns to ready.";
    parts.push(el("p", { id: "release-hint", className: "hint", text: hint }));
  }

  const reasonId = nextId("reason");
  const archiveForm = el("form", { className: "archive-form", hidden: true, noValidate: true });
  const reason = el("input", { id: reasonId, type: "text", autocomplete: "off" });
  const cancel = el("button", { type: "button", className: "secondary", text: "Cancel" });
  archiveForm.append(
    el("label", { htmlFor: reasonId, text: "Archive reason" }),
    reason,
    el("div", { className: "actions" }, el("button", { type: "submit", className: "danger", text: "Archive task" }),
      cancel),
  );
  archiveToggle.addEventListener("click", () => {
    archiveForm.hidden = !archiveForm.hidden;
    archiveToggle.setAttribute("aria-expanded", String(!archiveForm.hidden));
    if (!archiveForm.hidden) reason.focus();
  });
  cancel.addEventListener("click", () => {
    archiveForm.hidden = true;
    archiveToggle.setAttribute("aria-expanded", "false");
    archiveToggle.focus();
  });
  archiveForm.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!reason.value.trim()) {
      showError(new Error("say why the task is archived"), "Archiving the task");
      reason.focus();
      return;
    }
    const path = `/board/tasks/${seg(task.id)}/archive`;
    act(path, { reason: reason.value }, "Archived: the task left the board.", "Archiving the task failed");
  });
  parts.push(archiveForm);
  box.replaceChildren(...parts);
}

function decideTask(task, kind, decision, label, comment) {
  const text = comment.value.trim();
  if (decision === "send_back" && !text) {
    const missing = new Error("say what is missing in the decision comment: it goes back with the task");
    showError(missing, "Sending the task back");
    comment.focus();
    return;
  }
  const body = { decision };
  if (text) body.comment = text;
  const done = {
    backlog: "Accepted into the backlog.",
    ready: "Accepted: the task is ready.",
    decline: "Declined: the task is rejected.",
    approve: "Approved: the task is done.",
    send_back: "Sent back: the task is ready again, with your comment.",
  }[decision];
  act(`/board/tasks/${seg(task.id)}/${kind}`, body, done, `${label} failed`);
}

/** One of the panel's decisions: its buttons wait, the panel shows the result, focus goes to the task's heading. */
async function act(path, body, done, context, method = "POST") {
  const box = $("task-actions");
  const buttons = Array.from(box.querySelectorAll("button"));
  for (const b of buttons) b.disabled = true;
  try {
    const task = await api(method, ws(path), body);
    learnTask(task);
    clearError();
    if (task && task.id === state.taskId) {
      renderWhere(task);
      renderActions(task);
      $("task-blocked").hidden = task.column !== "blocked";
    }
    $("task-h").focus();
    announce(`${task && task.identifier ? `${task.identifier}: ` : ""}${done}`);
    kick();
  } catch (error) {
    for (const b of buttons) b.disabled = false;
    if (!handleAuthFailure(error)) showError(error, context);
    if (error instanceof ApiError && error.status === 409) kick();
  }
}

async function postComment(event) {
  event.preventDefault();
  const taskId = state.taskId;
  const field = $("comment-text");
  if (!field.value.trim()) {
    showError(new Error("write the comment first"), "Posting the comment");
    field.focus();
    return;
  }
  const button = event.submitter || $("comment-form").querySelector("button");
  button.disabled = true;
  try {
    await api("POST", ws(`/board/tasks/${seg(taskId)}/comments`), { text: field.value });
    $("comment-form").reset();
    clearError();
    announce("Comment posted.");
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Posting the comment failed");
  } finally {
    button.disabled = false;
  }
}

async function addLink(event) {
  event.preventDefault();
  const other = $("link-other").value.trim();
  if (!other) {
    showError(new Error("name the other task (WS-number or id)"), "Linking the tasks");
    $("link-other").focus();
    return;
  }
  try {
    const body = { type: $("link-type").value, otherTaskId: other };
    const linked = await api("POST", ws(`/board/tasks/${seg(state.taskId)}/links`), body);
    $("link-form").reset();
    clearError();
    announce(linked && linked.created === false ? "These tasks were linked already." : "Link added.");
    kick();
  } catch (error) {
    if (!handleAuthFailure(error)) showError(error, "Linking the tasks failed");
  }
}

// -- links into the console: #/workspaces/<workspaceId>/tasks/<taskId> -------------------------------

function routeFromHash() {
  const match = /^#\/workspaces\/([^/]+)\/tasks\/([^/?#]+)\/?$/.exec(window.location.hash);
  if (!match) return null;
  try {
    return { workspaceId: decodeURIComponent(match[1]), taskId: decodeURIComponent(match[2]) };
  } catch {
    return null;
  }
}

/**
 * The address bar names the open task (a link to share, a reload that reopens it), without a history entry;
 * in the Agents view, the agents list or the open agent.
 */
function setRoute(taskId) {
  let wanted = "";
  if (state.view === "agents") wanted = agents.hash();
  else if (taskId && state.workspaceId) wanted = `#/workspaces/${seg(state.workspaceId)}/tasks/${seg(taskId)}`;
  if (window.location.hash === wanted) return;
  if (!wanted && !window.location.hash) return;
  history.replaceState(null, "", wanted || `${window.location.pathname}${window.location.search}`);
}

async function applyRoute(route) {
  if (!route || !state.token) return;
  if (!state.workspaces.some((w) => w.id === route.workspaceId)) {
    showError(new Error(`this account has no workspace ${route.workspaceId}`), "Opening the link failed");
    return;
  }
  if (state.workspaceId !== route.workspaceId) {
    hideCreated();
    selectWorkspace(route.workspaceId);
  }
  let taskId = route.taskId;
  if (!TASK_ID.test(taskId)) {
    try {
      const task = await api("GET", ws(`/board/tasks/${seg(taskId)}`));
      learnTask(task);
      taskId = task.id;
    } catch (error) {
      if (!handleAuthFailure(error)) showError(error, `Opening task ${route.taskId} failed`);
      return;
    }
  }
  openTask(taskId);
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
  const agentsBefore = state.view === "agents";
  state.view = view;
  for (const button of document.querySelectorAll("nav.views button")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === view));
  }
  for (const name of ["tasks", "memory", "skills", "pano", "agents"]) $(`view-${name}`).hidden = name !== view;
  if (agentsBefore || view === "agents") setRoute(state.taskId);
  kick();
}

// The Agents view, with the console's helpers: the same API client, messages and polling round.
const agents = createAgents({
  api,
  ApiError,
  el,
  seg,
  when,
  timeEl,
  json,
  reconcile,
  nextId,
  showError,
  clearError,
  announce,
  handleAuthFailure,
  kick,
  setView,
  copyFrom,
  setRoute: () => setRoute(state.taskId),
});

// Claude Code's tool permission requests, at the head of "needs you", in the same polling round.
const permissions = createPermissions({
  api,
  ApiError,
  el,
  seg,
  ws,
  timeEl,
  reconcile,
  nextId,
  showError,
  clearError,
  announce,
  handleAuthFailure,
  kick,
  setNeeds,
  learnTitles,
  taskLabel,
  taskHref: (taskId) => `#/workspaces/${seg(state.workspaceId)}/tasks/${seg(taskId)}`,
});

// The Chrome extension card: whether the browser is connected, what it shares, how to install it.
const browserPanel = createBrowserPanel({ api, el, timeEl, reconcile, copyFrom });

// The notification settings: read when the card opens and after a save, never in the polling round.
const notifications = createNotifications({
  api,
  ApiError,
  el,
  seg,
  announce,
  showError,
  clearError,
  handleAuthFailure,
  workspaceId: () => state.workspaceId,
});

// The apps signed in to the workspace over OAuth, under the workspace card, read in full polling rounds.
const connectedApps = createConnectedApps({
  api,
  ApiError,
  el,
  seg,
  ws,
  timeEl,
  reconcile,
  showError,
  clearError,
  announce,
  handleAuthFailure,
  kick,
});

// -- start --------------------------------------------------------------------------------------

function wire() {
  buildStatusFilter();
  buildBoard();
  agents.wire();
  browserPanel.wire();
  notifications.wire();
  wireSignIn(signIn, showError);
  showMcpUrls();
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
  $("task-detail").addEventListener("keydown", (event) => {
    const typing = event.target.closest("input, textarea, select");
    if (event.key === "Escape" && !typing && !event.defaultPrevented) closeTask();
  });
  $("answer-in-comment").addEventListener("click", () => $("comment-text").focus());
  $("comment-form").addEventListener("submit", postComment);
  $("link-form").addEventListener("submit", addLink);
  $("board-task-form").addEventListener("submit", createBoardTask);
  $("board-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    applyFilters();
  });
  $("board-filters").addEventListener("change", (event) => {
    if (event.target.id !== "filter-query") applyFilters();
  });
  $("filter-query").addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(applyFilters, 500);
  });
  $("filter-clear").addEventListener("click", () => {
    resetFilters();
    announce("Filters cleared: showing the whole board…");
    kick();
  });
  $("policy-supervised").addEventListener("change", (event) =>
    setPolicy("supervised", event.target, "Supervised", (on) =>
      on ? "agents' new tasks wait in triage for you." : "agents' new tasks go straight to ready.",
    ),
  );
  $("policy-signoff").addEventListener("change", (event) =>
    setPolicy("signOff", event.target, "Sign-off", (on) =>
      on ? "deliveries wait in review for you." : "deliveries are done at once.",
    ),
  );
  $("cycle-active-form").addEventListener("submit", setActiveCycle);
  $("cycle-form").addEventListener("submit", createCycle);
  $("heading-form").addEventListener("submit", renameHeading);
  $("heading-delete").addEventListener("click", deleteHeading);
  window.addEventListener("hashchange", () => {
    if (!state.token) return;
    const route = routeFromHash();
    const agentsRoute = agents.routeFromHash();
    if (route) applyRoute(route);
    else if (agentsRoute) agents.applyRoute(agentsRoute);
  });
  for (const button of document.querySelectorAll("nav.views button")) {
    button.addEventListener("click", () => setView(button.dataset.view));
  }
  // The token lives in this tab's sessionStorage only, never localStorage: a reload keeps it, a new tab does not.
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved);
  else $("token-input").focus();
}

wire();
