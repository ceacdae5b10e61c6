"""DynamoDB update and condition expressions, built rather than glued together by hand.

Conditions are boto3's own (`boto3.dynamodb.conditions.Attr`, combined with `&`, `|` and `~`), rendered
by its `ConditionExpressionBuilder`; boto3 has no builder for update expressions, so `Update` is ours.
Both alias every attribute name and value: no placeholder is written by hand, a reserved word such as
`status` or `name` needs no thought, and a request never carries an empty names or values map (DynamoDB
refuses those). Conditions several repositories share are named here; one only a single repository
uses is named in that repository.
"""

import collections.abc
import re
from typing import Any, Self

from boto3.dynamodb.conditions import Attr, ConditionBase, ConditionExpressionBuilder

from agent_workspace.store import keys
from agent_workspace.store.dynamo import to_item

NEW_ITEM = Attr(keys.PK).not_exists()  # a create: nothing at this key yet
EXISTS = Attr(keys.PK).exists()  # the item must be there: an update never creates one, a delete finds it


def status_is(status: str) -> ConditionBase:
    """A status change: the item is still in the status it was read in."""
    return Attr("status").eq(status)


def revision_is(revision: int) -> ConditionBase:
    """An optimistic write: the item is still at the revision it was read at."""
    return Attr("revision").eq(revision)


def only_if(condition: ConditionBase) -> dict[str, Any]:
    """A Put, Delete or ConditionCheck's condition, as the request's keyword arguments."""
    built = ConditionExpressionBuilder().build_expression(condition)
    maps = _maps(built.attribute_name_placeholders, built.attribute_value_placeholders)
    return {"ConditionExpression": built.condition_expression, **maps}


_IN_EXPRESSION = re.compile(r"([#:])(\w+)")


class Update:
    """One item's update, with its condition: `params()` gives the request's keyword arguments.

    A name is a path: dots separate a map's keys (`taskCounts.completed`). Calls chain.
    """

    def __init__(self) -> None:
        self._clauses: dict[str, list[str]] = {"SET": [], "ADD": [], "DELETE": [], "REMOVE": []}
        self._names: dict[str, str] = {}  # attribute name -> its placeholder
        self._values: dict[str, Any] = {}  # placeholder -> value
        self._condition: ConditionBase | None = None

    def set(self, name: str, value: Any) -> Self:
        return self._clause("SET", f"{self._path(name)} = {self._value(value)}")

    def set_expr(self, name: str, expression: str, **values: Any) -> Self:
        """SET `name` to an expression, e.g. `list_append(#history, :entry)`: `#a` is attribute a, `:v` keyword v."""

        def alias(match: re.Match[str]) -> str:
            sign, word = match.groups()
            return self._path(word) if sign == "#" else self._value(values[word])

        return self._clause("SET", f"{self._path(name)} = {_IN_EXPRESSION.sub(alias, expression)}")

    def add(self, name: str, value: Any) -> Self:
        """A number added (from 0 when absent), or a set's elements added."""
        return self._clause("ADD", f"{self._path(name)} {self._value(value)}")

    def delete(self, name: str, elements: collections.abc.Set[Any]) -> Self:
        """Elements taken out of a set."""
        return self._clause("DELETE", f"{self._path(name)} {self._value(elements)}")

    def remove(self, name: str) -> Self:
        return self._clause("REMOVE", self._path(name))

    def only_if(self, condition: ConditionBase) -> Self:
        """The write's condition; a second call ANDs its condition to the first."""
        self._condition = condition if self._condition is None else self._condition & condition
        return self

    def params(self) -> dict[str, Any]:
        clauses = " ".join(f"{verb} {', '.join(parts)}" for verb, parts in self._clauses.items() if parts)
        if not clauses:
            raise ValueError("an update that changes nothing")
        names = {placeholder: name for name, placeholder in self._names.items()}
        request: dict[str, Any] = {"UpdateExpression": clauses}
        if self._condition is None:
            return request | _maps(names, self._values)
        built = ConditionExpressionBuilder().build_expression(self._condition)  # its placeholders: #n0, :v0…
        request["ConditionExpression"] = built.condition_expression
        names |= built.attribute_name_placeholders
        return request | _maps(names, self._values | built.attribute_value_placeholders)

    def _clause(self, verb: str, clause: str) -> Self:
        self._clauses[verb].append(clause)
        return self

    def _path(self, name: str) -> str:
        return ".".join(self._names.setdefault(part, f"#u{len(self._names)}") for part in name.split("."))

    def _value(self, value: Any) -> str:
        if value is None:
            raise ValueError("DynamoDB stores no None: remove the attribute instead")
        placeholder = f":u{len(self._values)}"
        self._values[placeholder] = value
        return placeholder


def _maps(names: dict[str, str], values: dict[str, Any]) -> dict[str, Any]:
    """The names and values maps, each left out when empty."""
    maps: dict[str, Any] = {}
    if names:
        maps["ExpressionAttributeNames"] = names
    if values:
        maps["ExpressionAttributeValues"] = to_item(values)
    return maps
