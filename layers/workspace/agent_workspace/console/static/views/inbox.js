// The Inbox view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const inbox = {
  name: "inbox",
  label: "Inbox",
  icon: "✉",
  account: false,
  mount(root) {
    root.append(el("h1", { text: "Inbox" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
