"""Tools and their actions, declared once: the registry's types.

Each action's payload model validates the call and is what `help` prints (and docs/tools.md, generated
from `help`) and what `tools/list` advertises as that action's payload; its result model is what the
tool's `outputSchema` advertises and what its answers are checked against (`mcp_server.tool_schemas`).
They stand below both `tools/`, which declares with them, and `mcp_server/`, which serves what was declared.
"""

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.domain.models import Principal
from agent_workspace.runtime import Runtime


class Payload(BaseModel):
    """Base of every action payload: unknown fields and loose types are refused, never ignored."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoPayload(Payload):
    """For actions that take nothing."""


class HelpPayload(Payload):
    topic: str | None = Field(None, description="An action of this tool; leave out for the list of actions.")


@dataclass(frozen=True)
class Call:
    """Who is calling, and the process-wide runtime their action runs against."""

    principal: Principal
    runtime: Runtime
    request_id: str = ""
    deadline: float | None = None  # time.monotonic() when the Lambda invocation ends; None under uvicorn
    base_url: str = ""  # how clients reach this server: links into the console are made from it


class Answer(BaseModel):
    """Base of every action's result model: the JSON object an action answers, field for field.

    Closed (no other fields), so the branches of a tool's `oneOf` output schema never both match one answer.
    """

    model_config = ConfigDict(extra="forbid")


class TextBlocks(tuple[str, ...]):
    """An answer of several text blocks (load_agent's), each its own content item of the tool result."""


# A handler returns the answer's text, or an object / list / None that the dispatcher renders as
# JSON. A plain function runs via `run_blocking` (store calls block); a coroutine function (one that
# waits, like elicit) runs on the event loop and offloads its own store calls.
Handler = Callable[[Call, Any], Any]


@dataclass(frozen=True, eq=False)  # identity: declared once, compared and cached as themselves
class Action:
    name: str
    summary: str
    payload: type[Payload]
    handler: Handler
    example: dict[str, Any] | None = None
    read_only: bool = False
    destructive: bool = False
    # What a successful call answers: a JSON object of this model (or of one of these, for an action with
    # several outcomes; none for an action that only ever refuses), or (None) a text such as "task created
    # with id=…". `text_too`: an action with a result model that may also answer a text (`null`, a notice).
    result: type[BaseModel] | tuple[type[BaseModel], ...] | None = None  # closed models (`Answer`)
    text_too: bool = False
    # Repeating the same call changes nothing more (MCP's idempotentHint); read-only actions are so anyway.
    idempotent: bool = False

    @property
    def answers_text(self) -> bool:
        return self.result is None or self.text_too


@dataclass(frozen=True, eq=False)
class Tool:
    name: str
    summary: str
    actions: tuple[Action, ...]
    title: str = ""  # how a client shows the tool to a person
    # The tool reaches things outside this workspace's own data (websites in the person's browser).
    open_world: bool = False
    help_action: Action = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "help_action",
            Action(
                name="help",
                summary='This list, or with payload {"topic": "<action>"} that action\'s payload.',
                payload=HelpPayload,
                handler=_help_is_dispatched_elsewhere,
                read_only=True,
            ),
        )

    def all_actions(self) -> tuple[Action, ...]:
        return (*self.actions, self.help_action)

    def action(self, name: str) -> Action | None:
        return next((a for a in self.all_actions() if a.name == name), None)

    @property
    def action_names(self) -> list[str]:
        return [a.name for a in self.all_actions()]


def _help_is_dispatched_elsewhere(call: Call, payload: HelpPayload) -> None:  # pragma: no cover
    raise AssertionError("a tool's help action is answered by the dispatcher from the registry")


@dataclass(frozen=True, eq=False)
class ToolModule:
    """A tool declared as `TOOL` in a module of its own, imported the first time a call, `help` or a listing needs
    it: a cold start builds no tool's models, and a call builds only its own tool's (a SnapStart snapshot holds them
    all, `mcp_server.server.build_all`)."""

    name: str
    module: str

    def load(self) -> Tool:
        tool = importlib.import_module(self.module).TOOL  # after the first time, a lookup in sys.modules
        if not isinstance(tool, Tool) or tool.name != self.name:
            raise TypeError(f"{self.module}.TOOL is not the tool {self.name!r}")
        return tool


@dataclass(frozen=True, eq=False)
class Registry:
    """The tools in the order `help` and `tools/list` show them: declared, or named with the module declaring them."""

    tools: tuple[Tool | ToolModule, ...]

    def tool(self, name: str) -> Tool | None:
        entry = next((t for t in self.tools if t.name == name), None)
        return entry.load() if isinstance(entry, ToolModule) else entry

    def __iter__(self) -> Iterator[Tool]:
        return (t.load() if isinstance(t, ToolModule) else t for t in self.tools)

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def only(self, names: tuple[str, ...]) -> "Registry":
        """The tools named, in this registry's order, none of them loaded for it."""
        return Registry(tuple(t for t in self.tools if t.name in names))
