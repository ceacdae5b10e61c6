// The fields of an agent's question (MCP elicitation): a form built from its `requestedSchema`, and the
// one-click choices when the schema asks for one choice only. The schema is the agent's, so untrusted: its
// titles and descriptions reach the page as text, and its patterns never reach the page's regex engine.

import { el, nextId } from "../../core/dom.js";

const MAX_ONE_CLICK = 8; // more choices than this read better as a list to pick from

/** The schema's properties and required names, whatever shape the agent sent. */
export function fieldsOf(schema) {
  const properties = schema && schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const required = new Set(schema && Array.isArray(schema.required) ? schema.required : []);
  return { properties, required };
}

function typeOf(property) {
  return Array.isArray(property.type) ? property.type.find((t) => t !== "null") : property.type;
}

/** An enum's choices as [value, text]: `enum` (+ `enumNames`), or `oneOf`/`anyOf` of `const`s; null if none. */
export function enumChoices(property) {
  if (Array.isArray(property.enum)) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : [];
    return property.enum.map((value, i) => [value, names[i] !== undefined ? String(names[i]) : String(value)]);
  }
  const options = Array.isArray(property.oneOf) ? property.oneOf : Array.isArray(property.anyOf) ? property.anyOf : [];
  if (options.length && options.every((o) => o && typeof o === "object" && "const" in o)) {
    return options.map((o) => [o.const, o.title !== undefined ? String(o.title) : String(o.const)]);
  }
  return null;
}

/**
 * When the question asks for one choice only (a single enum or boolean field), the choices a button each can
 * answer at once: {name, title, description, choices: [[value, text]]}; null when a form is needed.
 */
export function oneClick(schema) {
  const { properties } = fieldsOf(schema);
  const names = Object.keys(properties);
  if (names.length !== 1) return null;
  const name = names[0];
  const property = properties[name] && typeof properties[name] === "object" ? properties[name] : {};
  const title = property.title ? String(property.title) : name;
  const description = property.description ? String(property.description) : "";
  if (typeOf(property) === "boolean") return { name, title, description, choices: [[true, "Yes"], [false, "No"]] };
  const choices = enumChoices(property);
  if (!choices || choices.length === 0 || choices.length > MAX_ONE_CLICK) return null;
  return { name, title, description, choices };
}

/**
 * One field of the form for a schema property: string (text, email, url, date, a textarea when long), enum (a
 * select), number/integer, boolean (a checkbox). Returns {node, read}: `read()` is the value to send, or
 * undefined when left empty (the key is then left out).
 */
export function schemaField(name, property, isRequired) {
  const id = nextId("field");
  const hintId = property.description ? nextId("hint") : null;
  const wrap = el("div", { className: "field" });
  const label = el("label", { htmlFor: id }, property.title ? String(property.title) : name);
  if (isRequired) label.append(el("span", { className: "required", text: " *", "aria-hidden": "true" }));
  const hint = hintId ? el("p", { id: hintId, className: "hint", text: String(property.description) }) : null;
  const type = typeOf(property);
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
    input.append(el("option", { value: "", text: isRequired ? "Choose…" : "(none)" }));
    choices.forEach(([value, text], index) => {
      // The option's value is its index: an enum value may be a number or true, which a string would lose.
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
  // The property's name is kept as data, never as the control's `name`: a form exposes its named controls as
  // its own properties, so an agent's property called `reportValidity` or `addEventListener` would shadow the
  // form's methods and break the card. The answer is read from the readers below, never from the form.
  input.dataset.field = name;
  if (isRequired && type !== "boolean") input.required = true;
  if (isRequired) input.setAttribute("aria-required", "true");
  if (hint) {
    input.setAttribute("aria-describedby", hintId);
    wrap.append(hint);
  }
  return { node: wrap, read };
}

/** The fields of the whole schema, in the schema's order: {nodes, read()} where read() is the answer's content. */
export function schemaFields(schema) {
  const { properties, required } = fieldsOf(schema);
  const nodes = [];
  const readers = [];
  for (const [name, property] of Object.entries(properties)) {
    const field = schemaField(name, property && typeof property === "object" ? property : {}, required.has(name));
    nodes.push(field.node);
    readers.push([name, field.read]);
  }
  if (required.size) nodes.push(el("p", { className: "hint", text: "Fields marked * are required." }));
  const read = () => {
    const content = {};
    for (const [name, readOne] of readers) {
      const value = readOne();
      if (value !== undefined) content[name] = value;
    }
    return content;
  };
  return { nodes, read };
}
