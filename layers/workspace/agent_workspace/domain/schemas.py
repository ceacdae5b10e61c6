"""JSON Schemas from outside (an agent's question, a website's tools): checked when stored, applied when used.

Left to itself jsonschema fetches whatever a `$ref` names that the schema does not hold (http, https, file and data
URLs, with no timeout), runs `pattern` in Python's `re` (no time limit), compares `uniqueItems` pairwise and recurses
without end on `{"$ref": "#"}`. Here a schema refers only within itself and nothing is ever retrieved; its patterns
run in the bounded engine of `domain.patterns`; its size, nesting, references and the work of applying it are
bounded; and every refusal names the field, e.g. `requestedSchema.properties.x.$ref`.
"""

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    ValidationError,
    validators,
)
from jsonschema.exceptions import best_match
from jsonschema_specifications import REGISTRY as METASCHEMAS

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.json_values import check_json
from agent_workspace.domain.patterns import UNROLLED_MAX, Deadline, PatternTimeout, compile_pattern, unrolled_size

DEPTH_MAX = 24  # objects and arrays: DynamoDB stores 32 levels, and the item nests the schema a few levels down
EXPANSION_MAX = 10_000  # subschemas applied to one value in place, through $ref, allOf, anyOf, oneOf, not, if...
# The work of applying a schema once, in steps: a keyword evaluated is 1, each subschema it applies 4 more (that
# is what jsonschema's descent costs), each 16 values an enum or uniqueItems compares 1: 0.3 to 0.9 seconds. A
# 64 KiB array of 16,000 strings takes 112,000.
WORK_MAX = 150_000
WORK_SECONDS = 1.5  # and a ceiling in time, should some keyword cost more per step than measured
# The dialects a schema may name in `$schema` (with or without a trailing '#'); none means 2020-12. Not draft 3
# (2010): its schema-valued `type`, `extends` and `disallow` would need securing too, and no client writes it now.
DIALECTS = {
    "http://json-schema.org/draft-04/schema": Draft4Validator,
    "http://json-schema.org/draft-06/schema": Draft6Validator,
    "http://json-schema.org/draft-07/schema": Draft7Validator,
    "https://json-schema.org/draft/2019-09/schema": Draft201909Validator,
    "https://json-schema.org/draft/2020-12/schema": Draft202012Validator,
}

_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords whose subschemas apply to the very same value: a loop through them never ends.
_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies")
# Keywords whose subschemas apply to parts of the value (or hold definitions): walked, but no loop through them.
_STRUCTURAL = (
    "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames", "items",
    "prefixItems", "additionalItems", "unevaluatedItems", "contains", "$defs", "definitions",
)  # fmt: skip
_NAMED_SCHEMAS = ("properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions")


def _refuse_retrieval(uri: str) -> referencing.Resource:
    """What a reference outside the schema resolves to: nothing; no URL, file or data is ever read."""
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs class, typed loosely


_NO_RETRIEVAL: referencing.Registry = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


@dataclass(frozen=True)
class Mismatch:
    """Where a value does not match its schema, and why, in jsonschema's words."""

    path: tuple[str | int, ...]
    message: str
    keyword: str
    missing: str | None = None  # for `required`: the first property that is missing


def check_schema(schema: Any, field: str, max_bytes: int) -> dict[str, Any]:
    """`schema` if it is a JSON Schema the server can store and apply safely, else `PayloadError` naming the field."""
    if not isinstance(schema, dict):
        raise PayloadError(f"{field} must be a JSON Schema object", field=field)
    check_json(schema, field, max_bytes=max_bytes, max_depth=DEPTH_MAX)
    dialect, body = _dialect(schema, field), _without_dialect(schema)
    survey = _check_keywords(body, field)
    _check_against_metaschema(dialect, body, field)
    _References(dialect, body, field, survey).check()
    return schema


def first_mismatch(instance: Any, schema: dict[str, Any], field: str, schema_field: str) -> Mismatch | None:
    """The first place (by path) where `instance` does not match `schema`, or None.

    The schema is checked whole first (once per process), so one stored before these checks existed cannot harm
    either. A pattern out of time, or a schema that takes too much work to apply, is a `PayloadError` naming the
    field."""
    _check_stored(schema, schema_field)
    dialect, body = _dialect(schema, schema_field), _without_dialect(schema)
    budget = _Budget(Deadline())
    token = _BUDGET.set(budget)
    try:
        errors = list(_bounded(dialect)(body, registry=_NO_RETRIEVAL).iter_errors(instance))
    except PatternTimeout as slow:
        where = _join(field, _path_to(instance, slow.text))
        raise PayloadError(
            f"{where}: the pattern {slow.pattern[:200]!r} takes too long to evaluate on this value", field=where
        ) from None
    except _TooMuchWork:
        raise PayloadError(
            f"{field} takes too much work to check against {schema_field} (over {WORK_MAX:,} steps)", field=field
        ) from None
    except (RecursionError, referencing.exceptions.Unresolvable):  # ruled out by check_schema; kept as a net
        raise PayloadError(f"{schema_field} cannot be applied to {field}", field=schema_field) from None
    finally:
        _BUDGET.reset(token)
    if not errors:
        return None
    first = min(errors, key=lambda error: ([str(part) for part in error.absolute_path], error.message))
    missing = None
    if first.validator == "required" and isinstance(first.instance, dict):
        missing = next((name for name in first.validator_value if name not in first.instance), None)
    return Mismatch(tuple(first.absolute_path), first.message, str(first.validator), missing)


def _check_stored(schema: dict[str, Any], field: str) -> None:
    """`check_schema` but for the size, remembered by digest: a site's tool is called again and again, and the
    metaschema alone takes a second on 300 KiB."""
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    if digest in _APPLICABLE:
        return
    check_schema(schema, field, max_bytes=2**31)
    if len(_APPLICABLE) >= _APPLICABLE_MAX:
        _APPLICABLE.pop(next(iter(_APPLICABLE)))
    _APPLICABLE[digest] = None


_APPLICABLE: dict[str, None] = {}  # digests of stored schemas that passed `check_schema`, oldest first
_APPLICABLE_MAX = 1024


# -- checks when stored ------------------------------------------------------------------------------------------


def _dialect(schema: dict[str, Any], field: str) -> Any:
    """The validator class of the dialect the schema names in `$schema`; 2020-12 when it names none."""
    declared = schema.get("$schema")
    if declared is None:
        return Draft202012Validator
    dialect = DIALECTS.get(declared.removesuffix("#")) if isinstance(declared, str) else None
    if dialect is None:
        raise PayloadError(
            f"{field}.$schema must name JSON Schema draft-04, -06, -07, 2019-09 or 2020-12 (or be left out for "
            f"2020-12); got {str(declared)[:100]!r}",
            field=f"{field}.$schema",
        )
    return dialect


def _without_dialect(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the validator gets it: the dialect is its class. Left in, a `$ref` to the root would make
    jsonschema switch to the dialect's plain validator there, patterns in `re` and all."""
    return {key: value for key, value in schema.items() if key != "$schema"}


@dataclass
class _Survey:
    """What `_check_keywords` saw: where each object is (by id), and the objects carrying each `$dynamicAnchor`
    (and `$recursiveAnchor`, under ""), where a dynamic reference may land."""

    locations: dict[int, str] = field(default_factory=dict)
    anchors: dict[str, list[int]] = field(default_factory=dict)


def _check_keywords(schema: dict[str, Any], field: str) -> _Survey:
    """Every object in the schema, data included (a `$ref` may point anywhere): references stay inside, patterns
    compile in the bounded engine, and nothing below the root switches dialect."""
    survey = _Survey()
    units, unevaluated, patterned = 0, None, False
    stack: list[tuple[Any, str]] = [(schema, field)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, list):
            stack.extend((item, f"{at}[{index}]") for index, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        survey.locations[id(node)] = at
        if "$schema" in node:  # the root's is taken off before: below it, jsonschema would switch validators
            raise PayloadError(f"{at}.$schema: only the schema's root may name its dialect", field=f"{at}.$schema")
        for keyword in _REFS:
            if keyword in node:
                ref = node[keyword]
                if not isinstance(ref, str) or not ref.startswith("#"):
                    raise PayloadError(
                        f"{at}.{keyword} must refer within the schema ('#/$defs/...' or '#anchor'); references "
                        f"to anything outside it (URLs, files, data, other schemas) are not followed; got "
                        f"{str(ref)[:100]!r}",
                        field=f"{at}.{keyword}",
                    )
        if isinstance(node.get("$dynamicAnchor"), str):
            survey.anchors.setdefault(node["$dynamicAnchor"], []).append(id(node))
        if node.get("$recursiveAnchor") is True:
            survey.anchors.setdefault("", []).append(id(node))
        found = []
        if isinstance(node.get("pattern"), str):
            found.append((node["pattern"], f"{at}.pattern"))
        if isinstance(node.get("patternProperties"), dict):
            patterned = True
            found += [(key, f"{at}.patternProperties.{key}") for key in node["patternProperties"]]
        for pattern, where in found:
            compile_pattern(pattern, where)
            units += unrolled_size(pattern) or 0
            if units > UNROLLED_MAX:
                raise PayloadError(
                    f"{where}: the schema's patterns together are too large once their repeats are unrolled "
                    f"(over {UNROLLED_MAX:,})",
                    field=where,
                )
        if "unevaluatedProperties" in node and unevaluated is None:
            unevaluated = f"{at}.unevaluatedProperties"
        stack.extend((value, f"{at}.{key}") for key, value in node.items())
    if unevaluated is not None and patterned:  # jsonschema would run those patterns in `re`, without a limit
        raise PayloadError(
            f"{unevaluated} cannot be combined with patternProperties; use additionalProperties", field=unevaluated
        )
    return survey


def _check_against_metaschema(dialect: Any, schema: Any, field: str) -> None:
    error = best_match(_metaschema_checker(dialect).iter_errors(schema))
    if error is not None:
        where = _join(field, tuple(error.absolute_path))
        raise PayloadError(f"{where} is not a valid JSON Schema: {error.message[:300]}", field=where)


@cache
def _metaschema_checker(dialect: Any) -> Any:
    """The dialect's metaschema with a linear uniqueItems: jsonschema's compares every pair, so a `required` of
    8,000 objects took a minute. Its documents lose their `$schema`, which would switch each vocabulary back to
    the plain validator."""
    stripped = [
        (
            uri,
            referencing.jsonschema.specification_with(resource.contents["$schema"]).create_resource(
                {key: value for key, value in resource.contents.items() if key != "$schema"}
            ),
        )
        for uri, resource in METASCHEMAS.items()
        if isinstance(resource.contents, dict) and "$schema" in resource.contents
    ]
    registry = _NO_RETRIEVAL.with_resources(stripped)
    checker = validators.extend(dialect, {"uniqueItems": _unique_items})
    root = {key: value for key, value in dialect.META_SCHEMA.items() if key != "$schema"}
    return checker(root, registry=registry)


def _specification(dialect: Any) -> Any:
    return referencing.jsonschema.specification_with(dialect.META_SCHEMA.get("$id") or dialect.META_SCHEMA["id"])


class _References:
    """Every `$ref` of the schema resolved as jsonschema will resolve it, and the loops it would follow: a
    subschema that reaches itself again on the same value (`{"$ref": "#"}`, `a → b → a` through allOf) would
    recurse until Python gives up, and a chain of `allOf: [#/a, #/a]` doubles its work at every level."""

    def __init__(self, dialect: Any, schema: dict[str, Any], field: str, survey: _Survey) -> None:
        self.dialect, self.schema, self.field, self.survey = dialect, schema, field, survey
        self.specification = _specification(dialect)
        self.edges: dict[int, list[tuple[int, str]]] = {}  # in place: object → [(object, where the edge is)]
        self.checked: set[int] = set()  # objects known to be valid schemas

    def check(self) -> None:
        resolver = _NO_RETRIEVAL.resolver_with_root(self.specification.create_resource(self.schema))
        self._mark_schemas(self.schema)
        self._walk(self.schema, resolver, self.field)
        self._check_loops()

    def _walk(self, root: Any, resolver: Any, at: str) -> None:
        stack = [(root, resolver, at)]
        while stack:
            node, resolver, at = stack.pop()
            if not isinstance(node, dict) or id(node) in self.edges:
                continue
            at = self.survey.locations.get(id(node), at)  # where it is, rather than how it was reached
            self.edges[id(node)] = []
            for child, where, in_place in _subschemas(node, at):
                scoped = resolver.in_subresource(self.specification.create_resource(child))
                if in_place and isinstance(child, dict):
                    self.edges[id(node)].append((id(child), where))
                stack.append((child, scoped, where))
            for keyword in _REFS:
                if keyword in node:
                    where = f"{at}.{keyword}"
                    target, scoped = self._resolve(node[keyword], resolver, where)
                    if isinstance(target, dict):
                        self.edges[id(node)].append((id(target), where))
                        stack.append((target, scoped, where))
                    if keyword != "$ref":  # it may land on any matching anchor in the dynamic scope
                        name = "" if keyword == "$recursiveRef" else node[keyword].partition("#")[2]
                        self.edges[id(node)] += [(anchor, where) for anchor in self.survey.anchors.get(name, [])]

    def _resolve(self, ref: str, resolver: Any, where: str) -> tuple[Any, Any]:
        try:
            resolved = resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            raise PayloadError(f"{where} {ref[:100]!r} points to nothing in the schema", field=where) from None
        target = resolved.contents
        if not isinstance(target, dict | bool):
            raise PayloadError(f"{where} {ref[:100]!r} points to something that is no schema", field=where)
        if isinstance(target, dict) and id(target) not in self.checked:  # a schema hidden in data, e.g. an enum
            _check_against_metaschema(self.dialect, target, where)
            self._mark_schemas(target)
        return target, resolved.resolver

    def _mark_schemas(self, root: Any) -> None:
        """What the metaschema has checked: `root` and the subschemas its keywords hold."""
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, dict) and id(node) not in self.checked:
                self.checked.add(id(node))
                stack.extend(child for child, _, _ in _subschemas(node, ""))

    def _check_loops(self) -> None:
        """Depth-first over the in-place edges: an edge back to an object on the path is a loop; on the way
        back, count the subschemas each object applies to one value."""
        expansion: dict[int, int] = {}
        on_path: set[int] = set()
        for start in list(self.edges):
            if start in expansion:
                continue
            stack: list[tuple[int, Iterator[tuple[int, str]]]] = [(start, iter(self.edges.get(start, [])))]
            on_path.add(start)
            while stack:
                node, pending = stack[-1]
                step = next(pending, None)
                if step is None:
                    stack.pop()
                    on_path.discard(node)
                    expansion[node] = 1 + sum(expansion[child] for child, _ in self.edges.get(node, []))
                    if expansion[node] > EXPANSION_MAX:
                        raise PayloadError(
                            f"{self.field} applies more than {EXPANSION_MAX:,} subschemas to one value through "
                            "$ref, allOf, anyOf and oneOf; define it with fewer",
                            field=self.field,
                        )
                    continue
                child, where = step
                if child in on_path:
                    raise PayloadError(
                        f"{where} refers back to a schema that contains it without going into a part of the value: "
                        "applying it would never end",
                        field=where,
                    )
                if child not in expansion:
                    on_path.add(child)
                    stack.append((child, iter(self.edges.get(child, []))))


def _subschemas(node: dict[str, Any], at: str) -> Iterator[tuple[Any, str, bool]]:
    """(subschema, where, applies in place) for each subschema a keyword of `node` holds."""
    for keyword in (*_IN_PLACE, *_STRUCTURAL):
        if keyword not in node:
            continue
        value, where, in_place = node[keyword], f"{at}.{keyword}", keyword in _IN_PLACE
        if keyword in _NAMED_SCHEMAS and isinstance(value, dict):
            for name, child in value.items():
                if isinstance(child, dict | bool):  # dependencies may also list property names
                    yield child, f"{where}.{name}", in_place
        elif isinstance(value, list):
            for index, child in enumerate(value):
                if isinstance(child, dict | bool):
                    yield child, f"{where}[{index}]", in_place
        elif isinstance(value, dict | bool):
            yield value, where, in_place


# -- applying a schema ------------------------------------------------------------------------------------------


class _TooMuchWork(Exception):
    """Applying the schema passed `WORK_MAX`; `first_mismatch` refuses."""


@dataclass
class _Budget:
    """One application's allowance: steps of work, and the time its patterns may take."""

    deadline: Deadline
    spent: int = 0
    calls: int = 0
    stop: float = field(default_factory=lambda: time.monotonic() + WORK_SECONDS)
    compiled: dict[str, Any] = field(default_factory=dict)

    def spend(self, steps: int) -> None:
        self.spent += steps
        self.calls += 1
        if self.spent > WORK_MAX or (self.calls % 128 == 0 and time.monotonic() > self.stop):
            raise _TooMuchWork

    def matches(self, pattern: str, text: str) -> bool:
        if pattern not in self.compiled:
            self.compiled[pattern] = compile_pattern(pattern, "pattern")
        return self.deadline.search(self.compiled[pattern], text)


_BUDGET: ContextVar[_Budget] = ContextVar("schema_budget")


def _metered(keyword: str, apply: Callable[..., Any]) -> Callable[..., Any]:
    def metered(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _BUDGET.get().spend(_steps(keyword, value, instance))
        return apply(validator, value, instance, schema)

    return metered


def _steps(keyword: str, value: Any, instance: Any) -> int:
    """What evaluating `keyword` costs, counted before it runs (an upper bound where the count is not known)."""
    sized = value if keyword in _BY_SCHEMAS else instance if keyword in _BY_PARTS else None
    descents = len(sized) if isinstance(sized, list | dict) else 1 if keyword in _BY_ONE else 0
    compared = value if keyword == "enum" else instance if keyword == "uniqueItems" else None
    return 1 + 4 * descents + (len(compared) // 16 if isinstance(compared, list) else 0)


_BY_SCHEMAS = ("allOf", "anyOf", "oneOf", "prefixItems", "dependentSchemas")  # a descent per subschema
_BY_PARTS = (  # a descent per part of the value, at most
    "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames", "items",
    "additionalItems", "unevaluatedItems", "contains", "dependencies",
)  # fmt: skip
_BY_ONE = ("not", "if", "then", "else", "$ref", "$dynamicRef", "$recursiveRef")


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _BUDGET.get().matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    budget = _BUDGET.get()
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if budget.matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's own, but matching patternProperties in the bounded engine."""
    if not validator.is_type(instance, "object"):
        return
    budget, known = _BUDGET.get(), schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = sorted(key for key in instance if key not in known and not any(budget.matches(p, key) for p in patterns))
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            listed = ", ".join(repr(pattern) for pattern in sorted(patterns))
            yield ValidationError(f"{', '.join(map(repr, extras))} {verb} not match any of the regexes: {listed}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({', '.join(map(repr, extras))} {verb} unexpected)"
            )


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """One pass over canonical forms instead of jsonschema's comparison of every pair (10 s for 3,000 objects)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        canonical = json.dumps(_integral(item), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if canonical in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(canonical)


def _integral(value: Any) -> Any:
    """1.0 and 1 are one number to JSON Schema; true and 1 are not (json.dumps keeps those apart)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


_OVERRIDES = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
}


@cache
def _bounded(dialect: Any) -> Any:
    """The dialect's validator with every keyword metered and the regex and pairwise ones replaced."""
    keywords = {name: _OVERRIDES.get(name, apply) for name, apply in dialect.VALIDATORS.items()}
    return validators.extend(dialect, {name: _metered(name, apply) for name, apply in keywords.items()})


def _path_to(root: Any, text: str) -> tuple[str | int, ...]:
    """Where in `root` the string `text` is, as a value or as a key (the pattern that ran out of time was applied
    to that very object); () if it is not found."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is text:
            return path
        if isinstance(node, dict):
            for key, value in node.items():
                if key is text:
                    return (*path, key)
                stack.append((value, (*path, key)))
        elif isinstance(node, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(node))
    return ()


def _join(field: str, path: tuple[str | int, ...]) -> str:
    return field + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
