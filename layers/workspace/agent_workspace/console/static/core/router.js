// Where the console is, in the address bar: a view and, for some, the thing open in it. Links can be shared
// and a reload comes back to the same place; Back closes what was opened.
//
//   #/board  #/inbox  #/memory[/<name>]  #/skills[/<name>]  #/pano[/<id>]  #/agents[/<id>]  #/settings
//   #/task/<WS-12 or id>                  the task's drawer, over the view it was opened from (the board)
//   #/workspaces/<workspaceId>/tasks/<id> a link the server hands out (task_url): that workspace, that task

export const VIEWS = ["board", "inbox", "memory", "skills", "pano", "agents", "settings"];
const LEGACY = /^#\/workspaces\/([^/]+)\/tasks\/([^/?#]+)\/?$/;
const ROUTE = /^#\/([a-z]+)(?:\/([^?#]+?))?\/?$/;

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** The route an address names: {view, id?, workspaceId?}; the board for anything else. */
export function parse(hash = window.location.hash) {
  const legacy = LEGACY.exec(hash);
  if (legacy) {
    const workspaceId = decode(legacy[1]);
    const id = decode(legacy[2]);
    if (workspaceId && id) return { view: "task", id, workspaceId };
  }
  const match = ROUTE.exec(hash);
  if (match && (VIEWS.includes(match[1]) || match[1] === "task")) {
    const id = match[2] ? decode(match[2]) : null;
    if (match[1] === "task" && !id) return { view: "board" };
    return id ? { view: match[1], id } : { view: match[1] };
  }
  return { view: "board" };
}

export function href(route) {
  const id = route.id ? `/${encodeURIComponent(route.id)}` : "";
  return `#/${route.view}${id}`;
}

const handlers = new Set();

/** Go somewhere: a new history entry (Back returns), or the same entry rewritten (`replace`). */
export function go(route, { replace = false } = {}) {
  const wanted = href(route);
  if (window.location.hash === wanted) {
    for (const handler of handlers) handler(parse(wanted));
    return;
  }
  if (replace) {
    history.replaceState(null, "", wanted);
    for (const handler of handlers) handler(parse(wanted));
  } else {
    window.location.hash = wanted; // hashchange tells the handlers
  }
}

export function onRoute(handler) {
  handlers.add(handler);
}

/** Whether an address is the router's: a route ("#/…"), or none (Back to the page as first loaded: the board). A
 * fragment such as "#view" (the skip link, an in-page anchor) is the page's, and changes no route. */
function isRoute(hash = window.location.hash) {
  return hash === "" || hash.startsWith("#/");
}

window.addEventListener("hashchange", () => {
  if (!isRoute()) return;
  const route = parse();
  for (const handler of handlers) handler(route);
});
