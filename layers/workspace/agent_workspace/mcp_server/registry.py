"""Tools and their actions, declared once.

Each action's payload model validates the call and is what `help` prints (and docs/tools.md, generated
from `help`), so they can never disagree; `tools/list` advertises each tool's action names and points
to `help` for the payload fields.
"""

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


@dataclass(frozen=True, eq=False)
class Tool:
    name: str
    summary: str
    actions: tuple[Action, ...]
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
class Registry:
    tools: tuple[Tool, ...]

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]
