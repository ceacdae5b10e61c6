// Preload for the MCP conformance CLI (`node --import ./tests/conformance/auth-preload.mjs ...`).
//
// The CLI has no flag for request headers, and the workspace answers 401 without a bearer token.
// This wraps globalThis.fetch (which the MCP SDK's client transport uses) so that every request to
// the server under test carries `Authorization: Bearer $MCP_BEARER_TOKEN`. Requests to any other
// origin go out untouched, and a request that already names an Authorization header keeps its own.
//
// One scenario, dns-rebinding-protection, sends its requests with the `undici` package's `request`
// rather than fetch; its `request` export gets the same treatment (patched before the CLI imports
// it), so that scenario checks the server's Host/Origin guard instead of its 401.
//
// The server is MCP_CONFORMANCE_URL if set, else the CLI's own `--url` argument.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const token = process.env.MCP_BEARER_TOKEN;
if (!token) {
  throw new Error("auth-preload: MCP_BEARER_TOKEN is not set");
}

function serverUrl() {
  if (process.env.MCP_CONFORMANCE_URL) return process.env.MCP_CONFORMANCE_URL;
  const args = process.argv;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--url" && i + 1 < args.length) return args[i + 1];
    if (args[i].startsWith("--url=")) return args[i].slice("--url=".length);
  }
  throw new Error("auth-preload: set MCP_CONFORMANCE_URL or pass --url");
}

const serverOrigin = new URL(serverUrl()).origin;
const originalFetch = globalThis.fetch;

function targetOf(input) {
  if (input instanceof Request) return input.url;
  return String(input); // a string or a URL
}

globalThis.fetch = function fetchWithBearer(input, init) {
  let url;
  try {
    url = new URL(targetOf(input));
  } catch {
    return originalFetch(input, init);
  }
  if (url.origin !== serverOrigin) return originalFetch(input, init);
  // Headers from init win over the Request's own, as fetch itself does it.
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
  return originalFetch(input, { ...init, headers });
};

// undici's `request(url, { headers })`, as the CLI resolves it (from its own script's location).
// undici is CommonJS: the CLI's `import { request } from "undici"` reads module.exports when it is
// linked, after this preload, so replacing the property here is what the CLI gets.
function patchUndici() {
  let undici;
  try {
    undici = createRequire(pathToFileURL(process.argv[1]))("undici");
  } catch {
    return; // a CLI without undici needs no patch
  }
  const originalRequest = undici.request;
  undici.request = function requestWithBearer(url, options = {}) {
    let target;
    try {
      target = new URL(typeof url === "object" && !(url instanceof URL) ? url.origin + url.path : String(url));
    } catch {
      return originalRequest.call(this, url, options);
    }
    if (target.origin !== serverOrigin) return originalRequest.call(this, url, options);
    const headers = { ...(options.headers ?? {}) };
    if (!Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) {
      headers.authorization = `Bearer ${token}`;
    }
    return originalRequest.call(this, url, { ...options, headers });
  };
}

patchUndici();
