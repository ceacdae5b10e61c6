// The task drawer. (A placeholder while it moves here from legacy-app.js.)

import { el } from "../core/dom.js";
import * as router from "../core/router.js";
import { currentView } from "../shell.js";

let root = null;
let taskRef = null;

export const drawer = {
  mount(node) {
    root = node;
  },
  open(ref) {
    taskRef = ref;
    root.replaceChildren(el("h2", { text: ref }));
    root.hidden = false;
  },
  close() {
    taskRef = null;
    root.hidden = true;
  },
  isOpen: () => taskRef !== null,
  async refresh() {},
  reset() {
    if (taskRef !== null) this.close();
  },
  dismiss() {
    router.go({ view: currentView() });
  },
};
