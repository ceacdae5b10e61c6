// Building and updating the page. What the server sends is untrusted (agents write it, an app that signs in
// names itself): it reaches the page only through textContent, attributes set one by one and links whose scheme
// is checked. A view's own constant markup is the one thing parsed as HTML (`fragment`).

export const $ = (id) => document.getElementById(id);

/** An element with properties (text, className, dataset, DOM properties, other attributes) and children. */
export function el(tag, props = {}, ...children) {
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

/** A view's constant markup (a string in its own module, never data) as nodes. */
export function fragment(markup) {
  const template = document.createElement("template");
  template.innerHTML = markup;
  return template.content;
}

/** Set text only when it differs: an unchanged node keeps the human's selection and the screen reader's place. */
export function setText(node, text) {
  const value = text === undefined || text === null ? "" : String(text);
  if (node.textContent !== value) node.textContent = value;
}

/** Set or remove an attribute only when it differs. */
export function setAttr(node, name, value) {
  if (value === null || value === undefined || value === false) {
    if (node.hasAttribute(name)) node.removeAttribute(name);
  } else if (node.getAttribute(name) !== String(value)) {
    node.setAttribute(name, String(value));
  }
}

/** Replace a node's children only when their text would change (a cheap signature of what they say). `children`
 * is the new children, or a function building them, called only then (costly ones: rendered markdown). */
export function replaceIfChanged(node, children, signature) {
  if (node.dataset.sig === signature) return false;
  node.dataset.sig = signature;
  node.replaceChildren(...(typeof children === "function" ? children() : children));
  return true;
}

let uid = 0;
/** A page-unique id, for label/aria wiring. */
export const nextId = (prefix) => `${prefix}-${++uid}`;

/** Keep `container`'s children in step with `items`, by key: new ones created, gone ones removed, kept ones
 * updated in place and moved only when out of order (so focus and selection survive a refresh). A key listed twice
 * (the server's data is not ours to trust) shows once, the first item; a child that repeats a key is removed. */
export function reconcile(container, items, key, create, update) {
  const existing = new Map();
  for (const child of Array.from(container.children)) {
    const k = child.dataset.key;
    if (k === undefined || existing.has(k)) child.remove();
    else existing.set(k, child);
  }
  const wanted = [];
  const seen = new Set();
  for (const item of items) {
    const k = String(key(item));
    if (seen.has(k)) continue;
    seen.add(k);
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

/** A <select>'s options from [value, text] pairs, kept by value (the one chosen stays chosen). */
export function fillSelect(select, options) {
  reconcile(
    select,
    options,
    ([value]) => value,
    ([value, text]) => el("option", { value, text }),
    (node, [, text]) => setText(node, text),
  );
}

/** An http(s) URL, resolved against the page, or null: no javascript:, data: or other scheme is ever linked. */
export function safeHttpUrl(value) {
  try {
    const url = new URL(value, window.location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A link that opens elsewhere, or the plain text when the URL is not http(s). */
export function outLink(url, text = url) {
  const href = safeHttpUrl(url);
  return href
    ? el("a", { href, target: "_blank", rel: "noopener noreferrer", text })
    : el("span", { className: "meta", text: `${text} (not an http/https link, not opened)` });
}

/** Whether the human is typing: shortcuts and Esc leave a form field alone. */
export function typing(target) {
  return Boolean(target && target.closest && target.closest("input, textarea, select, [contenteditable]"));
}

/** Copy a field's text, or select it for Ctrl+C where the clipboard is refused; returns what to announce. */
export async function copyFrom(field, what) {
  const text = field.value;
  try {
    if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
    await navigator.clipboard.writeText(text);
    return `${what} was copied to the clipboard.`;
  } catch {
    field.focus();
    field.select();
    field.setSelectionRange(0, text.length);
    return `${what} is selected: press Ctrl+C (or ⌘C) to copy it.`;
  }
}
