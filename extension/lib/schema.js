// A small, bounded JSON Schema check of a call's arguments against the tool's schema as the page has it now.
//
// The server already checked the arguments against the schema the browser last reported; this catches a page whose
// tool changed since. It covers the keywords tools use to describe their input (type, enum, const, required,
// properties, additionalProperties, items, prefixItems, allOf/anyOf/oneOf/not, the numeric, length and item-count
// bounds) and skips the rest. `pattern` is never evaluated: it is a regular expression written by the page, and
// JavaScript's backtracking engine has no time limit, so a hostile one could hang the extension's worker.
// The work is bounded by the nesting of the value and schema (DEPTH_MAX) and by a step budget (STEPS_MAX).

export const DEPTH_MAX = 32;
export const STEPS_MAX = 20_000;

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];

class Budget {
  constructor() {
    this.steps = 0;
  }

  spend() {
    this.steps += 1;
    return this.steps <= STEPS_MAX;
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value, type) {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "null":
      return value === null;
    default:
      return TYPES.includes(type) ? typeof value === type : true; // an unknown type name constrains nothing
  }
}

function equal(a, b, depth = 0) {
  if (a === b) return true;
  if (depth > DEPTH_MAX || typeOf(a) !== typeOf(b) || typeof a !== "object" || a === null) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, i) => equal(item, b[i], depth + 1));
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k], depth + 1));
}

function show(value) {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function at(path, key) {
  return typeof key === "number" ? `${path}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

// The first mismatch as {path, message}, or null. Past the step budget the rest is taken as matching: the server
// checked the same call against the schema it holds, so this is a second look, not the only one.
function mismatch(schema, value, path, depth, budget) {
  if (schema === true || schema === undefined) return null;
  if (schema === false) return { path, message: "no value is allowed here" };
  if (!isObject(schema) || !budget.spend()) return null;
  if (depth > DEPTH_MAX) return { path, message: `nested deeper than ${DEPTH_MAX} levels` };

  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => hasType(value, type))) {
      return { path, message: `must be ${types.join(" or ")}, not ${typeOf(value)}` };
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => equal(option, value))) {
    return { path, message: `must be one of ${show(schema.enum)}` };
  }
  if (Object.hasOwn(schema, "const") && !equal(schema.const, value)) {
    return { path, message: `must be ${show(schema.const)}` };
  }
  const found =
    numberMismatch(schema, value, path) ??
    stringMismatch(schema, value, path) ??
    arrayMismatch(schema, value, path, depth, budget) ??
    objectMismatch(schema, value, path, depth, budget);
  if (found) return found;
  return combinedMismatch(schema, value, path, depth, budget);
}

function numberMismatch(schema, value, path) {
  if (typeof value !== "number") return null;
  if (typeof schema.minimum === "number" && value < schema.minimum) return { path, message: `must be at least ${schema.minimum}` };
  if (typeof schema.maximum === "number" && value > schema.maximum) return { path, message: `must be at most ${schema.maximum}` };
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
    return { path, message: `must be over ${schema.exclusiveMinimum}` };
  }
  if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
    return { path, message: `must be under ${schema.exclusiveMaximum}` };
  }
  return null;
}

function stringMismatch(schema, value, path) {
  if (typeof value !== "string") return null;
  const length = [...value].length; // JSON Schema counts code points, not UTF-16 units
  if (typeof schema.minLength === "number" && length < schema.minLength) {
    return { path, message: `must be at least ${schema.minLength} characters` };
  }
  if (typeof schema.maxLength === "number" && length > schema.maxLength) {
    return { path, message: `must be at most ${schema.maxLength} characters` };
  }
  return null;
}

function arrayMismatch(schema, value, path, depth, budget) {
  if (!Array.isArray(value)) return null;
  if (typeof schema.minItems === "number" && value.length < schema.minItems) {
    return { path, message: `must have at least ${schema.minItems} items` };
  }
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
    return { path, message: `must have at most ${schema.maxItems} items` };
  }
  // Draft 2020-12 puts positional schemas in prefixItems; drafts 4-7 in an array-valued items.
  const positional = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  for (let i = 0; i < value.length; i += 1) {
    const itemSchema = i < positional.length ? positional[i] : rest;
    const found = mismatch(itemSchema, value[i], at(path, i), depth + 1, budget);
    if (found) return found;
  }
  return null;
}

function objectMismatch(schema, value, path, depth, budget) {
  if (!isObject(value)) return null;
  for (const name of Array.isArray(schema.required) ? schema.required : []) {
    if (!Object.hasOwn(value, name)) return { path, message: `${show(name)} is required` };
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, item] of Object.entries(value)) {
    let found = null;
    if (Object.hasOwn(properties, key)) {
      found = mismatch(properties[key], item, at(path, key), depth + 1, budget);
    } else if (schema.additionalProperties === false && !isObject(schema.patternProperties)) {
      found = { path, message: `${show(key)} is not allowed (no additional properties)` };
    } else if (isObject(schema.additionalProperties) && !isObject(schema.patternProperties)) {
      found = mismatch(schema.additionalProperties, item, at(path, key), depth + 1, budget);
    } // with patternProperties, which properties are additional depends on patterns this check does not run
    if (found) return found;
  }
  return null;
}

function combinedMismatch(schema, value, path, depth, budget) {
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) {
      const found = mismatch(part, value, path, depth + 1, budget);
      if (found) return found;
    }
  }
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((part) => !mismatch(part, value, path, depth + 1, budget))) {
    return { path, message: "matches none of the schemas in anyOf" };
  }
  if (Array.isArray(schema.oneOf)) {
    const matching = schema.oneOf.filter((part) => !mismatch(part, value, path, depth + 1, budget)).length;
    if (matching !== 1) return { path, message: `matches ${matching} of the schemas in oneOf; exactly one must match` };
  }
  if (schema.not !== undefined && !mismatch(schema.not, value, path, depth + 1, budget)) {
    return { path, message: "matches the schema in not" };
  }
  return null;
}

/** Why `args` do not match the tool `name`'s `schema` (one sentence naming where), or null when they match. */
export function checkArguments(name, schema, args) {
  const found = mismatch(schema ?? { type: "object" }, args, "arguments", 0, new Budget());
  return found ? `the arguments do not match ${name}'s current inputSchema at ${found.path}: ${found.message}` : null;
}
