"""Help texts follow the reference's layout exactly: columns, usage line, required and optional fields."""

from typing import Literal

from pydantic import Field

from agent_workspace.mcp_server import help_text
from agent_workspace.tool_registry import Action, NoPayload, Payload, Tool


class CreatePayload(Payload):
    title: str = Field(description="Short title of the task")
    body: str = Field(description="Detailed description of the task or action needed")
    assignee: Literal["human", "agent"] = Field("agent", description="Who should complete the task.")
    attachments: list[dict] = Field(default_factory=list, description="Optional attachments")
    clearContext: bool | None = Field(None, description="Ask for a clean slate")


def _noop(call, payload):
    return None


TASK = Tool(
    name="task",
    summary="This workspace's tasks, and talking to the human in them.",
    actions=(
        Action(
            "create",
            "Create a task for the human or the agent, optionally scheduled. Returns its ID.",
            CreatePayload,
            _noop,
            example={
                "title": "Review the release notes",
                "body": "Check the v0.9.20 notes before Friday.",
                "assignee": "human",
            },
        ),
        Action("get", "Get a task.", NoPayload, _noop),
    ),
)


def test_action_help_matches_the_reference_layout():
    assert help_text.action_help(TASK, TASK.actions[0]) == "\n".join(
        [
            'Usage: task {"action": "create", "payload": {"title": <string>, "body": <string>, ...}}',
            "",
            "Create a task for the human or the agent, optionally scheduled. Returns its ID.",
            "",
            "Required:",
            "  title                string   Short title of the task",
            "  body                 string   Detailed description of the task or action needed",
            "",
            "Optional:",
            "  assignee             string   Who should complete the task.",
            "  attachments          array    Optional attachments",
            "  clearContext         boolean  Ask for a clean slate",
            "",
            "Example:",
            '  task {"action": "create", "payload": {"title": "Review the release notes", '
            '"body": "Check the v0.9.20 notes before Friday.", "assignee": "human"}}',
        ]
    )


def test_an_action_without_payload_says_so_and_its_example_has_no_payload():
    text = help_text.action_help(TASK, TASK.actions[1])
    assert text.splitlines()[0] == 'Usage: task {"action": "get"}'
    assert "Takes no payload." in text
    assert text.endswith('Example:\n  task {"action": "get"}')


def test_tool_help_lists_every_action_and_help_in_the_reference_columns():
    assert help_text.tool_help(TASK) == "\n".join(
        [
            'Usage: task {"action": "<action>", "payload": {...}}',
            "",
            "Actions:",
            "  create               Create a task for the human or the agent, optionally scheduled. Returns its ID.",
            "  get                  Get a task.",
            '  help                 This list, or with payload {"topic": "<action>"} that action\'s payload.',
        ]
    )
