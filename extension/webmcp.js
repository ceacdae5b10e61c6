// WebMCP for pages, where the browser has none: navigator.modelContext and document.modelContext, through which a
// page registers the tools an agent may call. Runs in the page's own world at document_start, before page scripts.
//
// Where Chrome has a native modelContext it is left in place. If it can list and run its tools (getTools and
// executeTool) the extension uses those; otherwise the extension keeps a copy of what the page registers through it.
// The extension reaches the page's tools through one hidden, frozen hook (`__agentWorkspaceWebMCP`). Nothing here
// may throw into the page on load.

(() => {
  "use strict";
  const HOOK = "__agentWorkspaceWebMCP";
  try {
    if (Object.hasOwn(globalThis, HOOK)) return;
    const tools = new Map(); // name -> the page's tool object

    const plain = (value, what) => {
      if (value === undefined) return undefined;
      try {
        return JSON.parse(JSON.stringify(value)); // the schema and annotations as data, without getters or functions
      } catch {
        throw new TypeError(`modelContext: the tool's ${what} must be JSON`);
      }
    };

    const check = (tool) => {
      if (!tool || typeof tool !== "object") throw new TypeError("modelContext.registerTool: a tool object is required");
      if (typeof tool.name !== "string" || !tool.name) throw new TypeError("modelContext.registerTool: the tool needs a name");
      if (typeof tool.execute !== "function") throw new TypeError(`modelContext.registerTool: ${tool.name} needs an execute function`);
      return {
        name: tool.name,
        description: typeof tool.description === "string" ? tool.description : "",
        inputSchema: plain(tool.inputSchema, "inputSchema") ?? { type: "object" },
        annotations: plain(tool.annotations, "annotations") ?? {},
        execute: tool.execute,
      };
    };

    const registerTool = (tool, options) => {
      const entry = check(tool);
      if (tools.has(entry.name)) throw new DOMException(`a tool named ${entry.name} is registered already`, "InvalidStateError");
      const signal = options?.signal;
      if (signal?.aborted) return;
      tools.set(entry.name, entry);
      signal?.addEventListener?.("abort", () => tools.get(entry.name) === entry && tools.delete(entry.name), { once: true });
    };
    const unregisterTool = (name) => {
      tools.delete(String(name));
    };
    const clearContext = () => tools.clear();
    const provideContext = (context) => {
      const entries = Array.from(context?.tools ?? [], check); // all checked before any replaces the old set
      const names = new Set(entries.map((e) => e.name));
      if (names.size !== entries.length) throw new DOMException("two tools have the same name", "InvalidStateError");
      tools.clear();
      for (const entry of entries) tools.set(entry.name, entry);
    };
    const getTools = () =>
      Array.from(tools.values(), (t) => ({ name: t.name, description: t.description, inputSchema: plain(t.inputSchema), annotations: plain(t.annotations) }));
    const executeTool = async (name, input) => {
      const tool = tools.get(String(name));
      if (!tool) throw new DOMException(`no tool named ${name} is registered`, "NotFoundError");
      // The agent's client: a tool that wants the human's attention gets it (the human approved the call already).
      const client = Object.freeze({ requestUserInteraction: async (callback) => callback() });
      return tool.execute(input ?? {}, client);
    };

    const native = globalThis.navigator?.modelContext;
    let hook;
    if (native && typeof native.getTools === "function" && typeof native.executeTool === "function") {
      hook = { list: () => native.getTools(), execute: (name, input) => native.executeTool(name, input) };
    } else if (native) {
      // A native modelContext that cannot list or run its tools: keep a copy of each registration as it passes.
      for (const [method, mirror] of [
        ["registerTool", registerTool],
        ["unregisterTool", unregisterTool],
        ["provideContext", provideContext],
        ["clearContext", clearContext],
      ]) {
        const original = native[method];
        if (typeof original !== "function") continue;
        try {
          Object.defineProperty(native, method, {
            configurable: true,
            writable: true,
            value: function (...args) {
              const answer = original.apply(this, args);
              try {
                mirror(...args);
              } catch {
                // the native call accepted what the copy could not: the tool just cannot be shared
              }
              return answer;
            },
          });
        } catch {
          // a frozen native object: its tools cannot be shared
        }
      }
      hook = { list: getTools, execute: executeTool };
    } else {
      const modelContext = Object.freeze({ registerTool, unregisterTool, provideContext, clearContext, getTools, executeTool });
      for (const target of [globalThis.navigator, globalThis.document]) {
        if (target && !("modelContext" in target)) {
          Object.defineProperty(target, "modelContext", { value: modelContext, configurable: true, enumerable: false });
        }
      }
      hook = { list: getTools, execute: executeTool };
    }
    Object.defineProperty(globalThis, HOOK, { value: Object.freeze(hook), configurable: false, enumerable: false, writable: false });
  } catch {
    // never break the page
  }
})();
