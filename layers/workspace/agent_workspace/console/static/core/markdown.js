// Markdown written by agents, rendered safely: the result is built from elements and text nodes (never
// innerHTML), links only when http(s), and the work is linear in the text (each line is looked at a bounded
// number of times; no regular expression that can backtrack). Past MAX_CHARS the text is shown as it is.
//
// What is understood: ATX headings, paragraphs, blank-line breaks, - * + and 1. lists (one level), > quotes,
// ``` fences, `code`, **strong**, *em* / _em_, [text](http…) links and bare http(s) URLs.

import { el, safeHttpUrl } from "./dom.js";

const MAX_CHARS = 100000;
const WINDOW = 400; // how far an inline marker looks for its end: keeps a line of 10,000 "[" linear-ish

/** Where `needle` next occurs in `text` after `from`, looking at most WINDOW characters ahead; -1 if not. */
function ahead(text, needle, from) {
  const found = text.slice(from, from + WINDOW).indexOf(needle);
  return found < 0 ? -1 : from + found;
}

/** A <div class="md"> holding `text` as rendered markdown. */
export function markdown(text) {
  const root = el("div", { className: "md" });
  const source = String(text || "");
  if (source.length > MAX_CHARS) {
    root.append(el("pre", { className: "text", text: source }));
    return root;
  }
  const lines = source.split("\n");
  let i = 0;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) root.append(el("p", {}, ...inline(paragraph.join("\n"))));
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const trimmed = line.trim();
    if (trimmed.startsWith("```")) {
      flush();
      const code = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith("```")) code.push(lines[i++]);
      i += 1;
      root.append(el("pre", { className: "code" }, el("code", { text: code.join("\n") })));
      continue;
    }
    if (!trimmed) {
      flush();
      i += 1;
      continue;
    }
    const heading = headingLevel(trimmed);
    if (heading) {
      flush();
      // h1/h2 of an agent's text sit under the view's own headings: from h3 down.
      root.append(el(`h${Math.min(6, heading + 2)}`, {}, ...inline(trimmed.slice(heading).trim())));
      i += 1;
      continue;
    }
    if (trimmed.startsWith(">")) {
      flush();
      const quoted = [];
      while (i < lines.length && lines[i].trim().startsWith(">")) quoted.push(lines[i++].trim().slice(1).trim());
      root.append(el("blockquote", {}, ...inline(quoted.join("\n"))));
      continue;
    }
    const item = listItem(trimmed);
    if (item) {
      flush();
      const list = el(item.ordered ? "ol" : "ul");
      while (i < lines.length) {
        const next = listItem(lines[i].trim());
        if (!next || next.ordered !== item.ordered) break;
        list.append(el("li", {}, ...inline(next.text)));
        i += 1;
      }
      root.append(list);
      continue;
    }
    paragraph.push(line);
    i += 1;
  }
  flush();
  return root;
}

function headingLevel(line) {
  let n = 0;
  while (n < line.length && n < 7 && line[n] === "#") n += 1;
  return n >= 1 && n <= 6 && line[n] === " " ? n : 0;
}

function listItem(line) {
  if ((line[0] === "-" || line[0] === "*" || line[0] === "+") && line[1] === " ") {
    return { ordered: false, text: line.slice(2) };
  }
  let n = 0;
  while (n < line.length && n < 9 && line[n] >= "0" && line[n] <= "9") n += 1;
  const numbered = n && (line[n] === "." || line[n] === ")") && line[n + 1] === " ";
  return numbered ? { ordered: true, text: line.slice(n + 2) } : null;
}

/** Inline markup as nodes, scanning left to right once; an unclosed marker stays as text. */
export function inline(text) {
  const out = [];
  let plain = "";
  const push = (node) => {
    if (plain) out.push(...withBreaks(plain));
    plain = "";
    out.push(node);
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "`") {
      const end = ahead(text, "`", i + 1);
      if (end > i + 1) {
        push(el("code", { text: text.slice(i + 1, end) }));
        i = end + 1;
        continue;
      }
    } else if (c === "*" && text[i + 1] === "*") {
      const end = ahead(text, "**", i + 2);
      if (end > i + 2) {
        push(el("strong", {}, ...inline(text.slice(i + 2, end))));
        i = end + 2;
        continue;
      }
    } else if ((c === "*" || c === "_") && text[i + 1] !== " " && text[i + 1] !== c) {
      const end = ahead(text, c, i + 1);
      if (end > i + 1 && text[end - 1] !== " ") {
        push(el("em", { text: text.slice(i + 1, end) }));
        i = end + 1;
        continue;
      }
    } else if (c === "[") {
      const close = ahead(text, "](", i + 1);
      const end = close > 0 ? ahead(text, ")", close + 2) : -1;
      const href = end > 0 ? safeHttpUrl(text.slice(close + 2, end).trim()) : null;
      if (href && !text.slice(i + 1, close).includes("\n")) {
        push(el("a", { href, target: "_blank", rel: "noopener noreferrer", text: text.slice(i + 1, close) }));
        i = end + 1;
        continue;
      }
    } else if (c === "h" && (text.startsWith("https://", i) || text.startsWith("http://", i))) {
      let end = i;
      while (end < text.length && end - i < 2048 && !" \n\t<>\"'".includes(text[end])) end += 1;
      while (end > i && ".,;:!?)".includes(text[end - 1])) end -= 1;
      const href = safeHttpUrl(text.slice(i, end));
      if (href) {
        push(el("a", { href, target: "_blank", rel: "noopener noreferrer", text: text.slice(i, end) }));
        i = end;
        continue;
      }
    }
    plain += c;
    i += 1;
  }
  if (plain) out.push(...withBreaks(plain));
  return out;
}

function withBreaks(text) {
  const parts = text.split("\n");
  return parts.flatMap((part, index) => (index ? [el("br"), part] : [part]));
}
