"""EventBridge Scheduler: one schedule per cron template, armed for its next fire time only.

Each schedule is a one-shot `at()` in UTC for the instant croniter computed; the fire handler
re-arms it for the following one. Scheduler's own cron syntax differs from the 5-field one
(day-of-week numbering, the `?` rule, no OR of day-of-month and day-of-week), so it never sees
the expression. `ActionAfterCompletion: NONE` keeps a fired schedule in place to be updated.
"""

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from agent_workspace.store.dynamo import translating_errors

_AT_FORMAT = "%Y-%m-%dT%H:%M:%S"
# Scheduler retries a target it could not reach for up to a day, then sends the event to the DLQ.
RETRY_POLICY = {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}


@dataclass(frozen=True)
class ScheduleTarget:
    """Where schedules deliver: the fire function, the role Scheduler assumes, and the DLQ."""

    function_arn: str
    role_arn: str
    dead_letter_arn: str


@dataclass(frozen=True)
class ArmedSchedule:
    name: str
    fire_at: datetime
    input: dict[str, Any]


def schedule_name(workspace_id: str, template_id: str) -> str:
    return f"task-{workspace_id}-{template_id}"


def at_expression(instant: datetime) -> str:
    """Scheduler's at() has whole seconds: round up, so a schedule never fires before its instant."""
    if instant.microsecond:
        instant = instant.replace(microsecond=0) + timedelta(seconds=1)
    return f"at({instant.astimezone(UTC).strftime(_AT_FORMAT)})"


def parse_at(expression: str) -> datetime:
    return datetime.strptime(expression.removeprefix("at(").removesuffix(")"), _AT_FORMAT).replace(tzinfo=UTC)


class ScheduleStore:
    def __init__(self, scheduler: Any, group: str, target: ScheduleTarget) -> None:
        self._scheduler = scheduler
        self._group = group
        self._target = target

    def arm(self, name: str, fire_at: datetime, payload: dict[str, Any]) -> None:
        """Create the schedule, or move an existing one, to fire once at `fire_at` with `payload`."""
        request = self._request(name, fire_at, payload)
        with _translating():
            try:
                self._scheduler.update_schedule(**request)
            except ClientError as error:
                if _code(error) != "ResourceNotFoundException":
                    raise
                self._scheduler.create_schedule(**request, ActionAfterCompletion="NONE")

    def create(self, name: str, fire_at: datetime, payload: dict[str, Any]) -> None:
        """A new template's schedule: one request, where `arm` would try an update first."""
        with _translating():
            self._scheduler.create_schedule(**self._request(name, fire_at, payload), ActionAfterCompletion="NONE")

    def disarm(self, name: str) -> None:
        """Delete the schedule; one already gone is fine."""
        with _translating():
            try:
                self._scheduler.delete_schedule(Name=name, GroupName=self._group)
            except ClientError as error:
                if _code(error) != "ResourceNotFoundException":
                    raise

    def get(self, name: str) -> ArmedSchedule | None:
        with _translating():
            try:
                found = self._scheduler.get_schedule(Name=name, GroupName=self._group)
            except ClientError as error:
                if _code(error) == "ResourceNotFoundException":
                    return None
                raise
        return _armed(found)

    def list_armed(self) -> list[ArmedSchedule]:
        """Every schedule of the group; the local stack's stand-in for Scheduler polls this."""
        names: list[str] = []
        with _translating():
            for page in self._scheduler.get_paginator("list_schedules").paginate(GroupName=self._group):
                names.extend(item["Name"] for item in page.get("Schedules", []))
        return [armed for name in names if (armed := self.get(name)) is not None]

    def _request(self, name: str, fire_at: datetime, payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "Name": name,
            "GroupName": self._group,
            "ScheduleExpression": at_expression(fire_at),
            "ScheduleExpressionTimezone": "UTC",
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED",
            "Target": {
                "Arn": self._target.function_arn,
                "RoleArn": self._target.role_arn,
                "Input": json.dumps(payload, separators=(",", ":")),
                "RetryPolicy": RETRY_POLICY,
                "DeadLetterConfig": {"Arn": self._target.dead_letter_arn},
            },
        }


def _armed(found: dict[str, Any]) -> ArmedSchedule:
    return ArmedSchedule(found["Name"], parse_at(found["ScheduleExpression"]), json.loads(found["Target"]["Input"]))


def _code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")


def _translating() -> AbstractContextManager[None]:
    return translating_errors(service="scheduler")
