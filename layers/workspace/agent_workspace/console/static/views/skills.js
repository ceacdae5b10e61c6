// The Skills view (`#/skills`, `#/skills/<name>`): the workspace's skills (its own, and those shared into it,
// read-only here), the open one's SKILL.md rendered as markdown (its frontmatter shown apart, as written), and
// its other files, each opened below it: a .md file rendered, anything else shown as text.
//
// The list is read every round while the view is on screen; the open skill in full rounds, and re-rendered only
// when its updatedAt moved, so the human's place in it (and the file open) survive.

import * as store from "../core/store.js";
import { seg } from "../core/api.js";
import { el, setAttr, setText } from "../core/dom.js";
import { timeEl } from "../core/format.js";
import { showError } from "../core/feedback.js";
import { markdown } from "../core/markdown.js";
import { docsFrame, docReader, pickList } from "./docs/layout.js";

let frame = null;
let reader = null; // the skill the address names (reader.id), and {name, updatedAt} of the one rendered (shown)
let filePath = null; // the skill file open below SKILL.md

/** SKILL.md's YAML frontmatter apart from its markdown: [frontmatter or "", the rest]. */
function splitFrontmatter(text) {
  const source = String(text || "");
  if (!source.startsWith("---\n")) return ["", source];
  const end = source.indexOf("\n---", 4);
  if (end < 0) return ["", source];
  const after = source.indexOf("\n", end + 4);
  return [source.slice(4, end), after < 0 ? "" : source.slice(after + 1)];
}

function render(skill) {
  setText(frame.heading, skill.name);
  const shared = skill.sharedWith && skill.sharedWith.length ? ` · shared with ${skill.sharedWith.join(", ")}` : "";
  const readOnly = skill.sharedIn ? " · shared in: read-only here" : "";
  frame.meta.replaceChildren(`${skill.description} · updated `, timeEl(skill.updatedAt), `${readOnly}${shared}`);
  const [front, rest] = splitFrontmatter(skill.content);
  const parts = [el("h3", { text: "SKILL.md" })];
  if (front) {
    const raw = el("pre", { className: "doc", text: front });
    parts.push(el("details", { className: "frontmatter" }, el("summary", { text: "Frontmatter" }), raw));
  }
  parts.push(markdown(rest));
  const prefix = `skill://${skill.name}/`;
  const files = (skill.files || []).map((uri) => (uri.startsWith(prefix) ? uri.slice(prefix.length) : uri));
  const list = el("ul", { className: "list skill-files", "aria-labelledby": "skill-files-h" });
  for (const path of files) {
    const button = el("button", { type: "button", className: "linkish", text: path });
    button.addEventListener("click", () => openFile(skill.name, path, button));
    list.append(el("li", {}, button));
  }
  parts.push(el("h3", { id: "skill-files-h", text: "Other files" }));
  parts.push(files.length ? list : el("p", { className: "empty", text: "None." }));
  parts.push(el("section", { className: "skill-file", hidden: true, "aria-labelledby": "skill-file-h" }));
  frame.body.replaceChildren(...parts);
  if (filePath && files.includes(filePath)) openFile(skill.name, filePath, null);
  else filePath = null;
  return { name: skill.name, updatedAt: skill.updatedAt };
}

function forgetFile() {
  filePath = null;
}

/** One of the skill's files, under SKILL.md (read each time it is opened: it may have changed). */
async function openFile(name, path, button) {
  filePath = path;
  for (const b of frame.body.querySelectorAll(".skill-files button")) {
    setAttr(b, "aria-current", b.textContent === path ? "true" : null);
  }
  const box = frame.body.querySelector(".skill-file");
  try {
    const encoded = path.split("/").map(seg).join("/");
    const file = await store.api("GET", store.ws(`/skills/${seg(name)}/files/${encoded}`));
    if (reader.id !== name || filePath !== path || !box.isConnected) return;
    const heading = el("h4", { id: "skill-file-h", tabindex: "-1", text: file.path });
    const isMarkdown = /\.(md|markdown)$/i.test(file.path);
    const content = isMarkdown ? markdown(file.content) : el("pre", { className: "doc", text: file.content });
    box.replaceChildren(heading, el("p", { className: "meta" }, "updated ", timeEl(file.updatedAt)), content);
    box.hidden = false;
    if (button) heading.focus();
  } catch (error) {
    showError(error, `Reading ${path} failed`, box.isConnected ? frame.body : frame.article);
  }
}

export const skills = {
  name: "skills",
  label: "Skills",
  icon: "S",
  account: false,
  mount(root) {
    frame = docsFrame(root, {
      view: "skills",
      title: "Skills",
      hint: "What the workspace's agents know how to do. A skill shared in from another workspace is read-only here.",
      listLabel: "Skills",
      empty: "No skills in this workspace yet.",
      choose: "Choose a skill to read it.",
    });
    reader = docReader(frame, {
      load: (name) => store.api("GET", store.ws(`/skills/${seg(name)}`)),
      render,
      changed: (doc, shown) => shown.name !== doc.name || shown.updatedAt !== doc.updatedAt,
      failed: (name) => ({ heading: name, context: `Reading skill ${name} failed` }),
      opened: forgetFile,
      closed: forgetFile,
    });
  },
  enter(route) {
    reader.enter(route);
  },
  leave() {},
  async refresh(current, full) {
    const list = await store.api("GET", store.ws("/skills"));
    if (!current()) return;
    const all = Array.isArray(list) ? list : [];
    pickList(frame, "skills", all, {
      key: (s) => s.name,
      label: (s) => s.name,
      describe: (s) => `${s.description}${s.sharedIn ? " · shared in, read-only" : ""}`,
      selected: reader.id,
    });
    const { id, shown } = reader;
    if (full && id && shown && all.some((s) => s.name === id)) await reader.read(id, { focus: false });
  },
  reset() {
    reader.reset();
  },
};
