"""A reference's words for what our actions answer: on /mcp/masaro a task's status is its board column and its text
is its `description` (AgentRQ's `body`), where /mcp answers as AgentRQ does.

The words are changes per result model (by its name under `$defs`), applied twice so the two stay in step: to the
action's result schema, which gives the outputSchema the tool lists, and to each answer, walked along that same
schema, so only the objects of the models named here change (a trigger's payload or a question's form, which may hold
any keys, never do).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agent_workspace.domain.columns import COLUMN_NAMES, DEFAULT_COLUMN

Json = dict[str, Any]


class Change(Protocol):
    """One difference of words in one model: to an object the model describes, and to the model's schema."""

    def answer(self, obj: Json) -> Json: ...

    def schema(self, model: Json) -> Json: ...


@dataclass(frozen=True)
class StatusIsColumn:
    """`status` is the board column: the object's `column`, or on a feed line that recorded an AgentRQ status alone,
    the column that status lands in when nothing says otherwise."""

    def answer(self, obj: Json) -> Json:
        column = obj.get("column")
        if column is None and obj.get("status") in DEFAULT_COLUMN:
            column = DEFAULT_COLUMN[obj["status"]]
        return _put(obj, "status", column, instead_of="column") if column is not None else obj

    def schema(self, model: Json) -> Json:
        column = model["properties"]["column"]
        nullable = isinstance(column.get("type"), list) and "null" in column["type"]
        status = {**column, "enum": [*COLUMN_NAMES, *([None] if nullable else [])]}
        return _with(model, "status", status, instead_of="column")


@dataclass(frozen=True)
class Renamed:
    """`name` holds what `old` held."""

    name: str
    old: str

    def answer(self, obj: Json) -> Json:
        return _put(obj, self.name, obj[self.old], instead_of=self.old) if self.old in obj else obj

    def schema(self, model: Json) -> Json:
        return _with(model, self.name, model["properties"][self.old], instead_of=self.old)


@dataclass(frozen=True)
class Dropped:
    """Fields no tool of the reference answers (AgentRQ's `task get` has them), kept out of its listing."""

    names: tuple[str, ...]

    def answer(self, obj: Json) -> Json:
        return {key: value for key, value in obj.items() if key not in self.names}

    def schema(self, model: Json) -> Json:
        properties = {key: value for key, value in model["properties"].items() if key not in self.names}
        return _required({**model, "properties": properties}, [r for r in model.get("required", ()) if r in properties])


@dataclass(frozen=True)
class Worded:
    """A text field that says something else in the reference's words (a tool it names)."""

    name: str
    text: str

    def answer(self, obj: Json) -> Json:
        return {**obj, self.name: self.text} if self.name in obj else obj

    def schema(self, model: Json) -> Json:
        return model


@dataclass(frozen=True)
class Fixed:
    """A field whose value the reference's words fix (the statuses a workspace knows)."""

    name: str
    value: Any
    value_schema: Json

    def answer(self, obj: Json) -> Json:
        return {**obj, self.name: self.value} if self.name in obj else obj

    def schema(self, model: Json) -> Json:
        return {**model, "properties": {**model["properties"], self.name: self.value_schema}}


def _put(obj: Json, name: str, value: Any, instead_of: str) -> Json:
    """`obj` with `value` under `name`, in the place of whichever of `name` and `instead_of` it has first; the other
    goes."""
    place = next(key for key in obj if key in (name, instead_of))
    out: Json = {}
    for key, old in obj.items():
        if key == place:
            out[name] = value
        elif key not in (name, instead_of):
            out[key] = old
    return out


def _with(model: Json, name: str, schema: Json, instead_of: str) -> Json:
    """A model's schema with the property `name` described by `schema` in `instead_of`'s stead, and required where
    either was."""
    required = dict.fromkeys(name if field == instead_of else field for field in model.get("required", ()))
    return _required({**model, "properties": _put(model["properties"], name, schema, instead_of)}, list(required))


def _required(model: Json, required: list[str]) -> Json:
    rest = {key: value for key, value in model.items() if key != "required"}
    return {**rest, "required": required} if required else rest


@dataclass(frozen=True)
class Words:
    """What a reference calls otherwise, per result model."""

    # By the model's name under `$defs` (a result model of `tools/answers/`, named, not imported: the words stand
    # below the tools, and tests/unit/test_words.py checks each name is a model an action answers).
    changes: Mapping[str, tuple[Change, ...]]

    def schema(self, schema: Json) -> Json:
        """An action's result schema (each model under `$defs`) in these words."""
        defs = {name: self._model(name, model) for name, model in schema.get("$defs", {}).items()}
        return {**schema, "$defs": defs}

    def present(self, answer: Json, schema: Json) -> Json:
        """An answer in these words: its objects found by walking `schema`, the action's result schema."""
        presented = self._walk(answer, schema, schema.get("$defs", {}))
        assert isinstance(presented, dict)
        return presented

    def _model(self, name: str, model: Json) -> Json:
        for change in self.changes.get(name, ()):
            model = change.schema(model)
        return model

    def _walk(self, value: Any, node: Json, defs: Json) -> Any:
        if value is None:
            return value
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[1]
            value = self._walk(value, defs[name], defs)
            for change in self.changes.get(name, ()) if isinstance(value, dict) else ():
                value = change.answer(value)
            return value
        options = node.get("anyOf") or node.get("oneOf") or ()
        branches = [branch for branch in options if branch != {"type": "null"}]
        if branches:
            branch = _branch(value, branches, defs)
            return self._walk(value, branch, defs) if branch is not None else value
        if isinstance(value, dict):
            fields = node.get("properties", {})
            return {key: self._walk(item, fields[key], defs) if key in fields else item for key, item in value.items()}
        if isinstance(value, list) and isinstance(node.get("items"), dict):
            return [self._walk(item, node["items"], defs) for item in value]
        return value


def _branch(value: Any, branches: list[Json], defs: Json) -> Json | None:
    """The branch of an `anyOf` that `value` is: the only one, or the closed model whose fields it has."""
    if len(branches) == 1:
        return branches[0]
    if not isinstance(value, dict):
        return None
    for branch in branches:
        model = defs.get(str(branch.get("$ref", "")).rsplit("/", 1)[-1], {})
        fields = model.get("properties", {})
        if fields and set(value) <= set(fields) and set(model.get("required", ())) <= set(value):
            return branch
    return None


_STATUS = StatusIsColumn()
_COLUMN_NAME = {"type": "string", "enum": [*COLUMN_NAMES]}
MASARO_WORDS = Words(
    {
        "TaskAnswer": (
            _STATUS,
            Renamed("description", "body"),
            Dropped(("history", "conversation")),
            Worded(
                "next",
                "This task has neither a summary nor acceptance criteria, and nothing here drafts them: if you can "
                "tell what done looks like, set them with update_task (summary, criteria); else ask the human with "
                "add_comment, or report_blocker.",
            ),
        ),
        "UnblockedTask": (_STATUS,),
        "Activity": (_STATUS,),
        "FetchMetadata": (_STATUS,),
        "Column": (_STATUS,),
        "BoardContext": (Fixed("statuses", list(COLUMN_NAMES), {"type": "array", "items": _COLUMN_NAME}),),
    }
)
