"""Each function's role grants the AWS calls the code makes, on the resources it makes them on, and nothing more.

The list of calls is read from the code itself: every boto3 call in agent_workspace/store (the only code
that touches boto3), mapped to the IAM actions that authorize it. The policies are read from the template
as CloudFormation gets it after the SAM transform, so nothing SAM adds on its own goes unseen.
"""

import ast
import json
import subprocess
from functools import cache
from pathlib import Path

import pytest

from tests.support import ROOT

STORE = ROOT / "layers" / "workspace" / "agent_workspace" / "store"
TOOLS_PYTHON = ROOT / ".venv-tools" / "bin" / "python"

# The names the store gives each boto3 client.
CLIENTS = {
    "_db": "dynamodb",
    "dynamodb": "dynamodb",
    "_s3": "s3",
    "_sqs": "sqs",
    "_scheduler": "scheduler",
    "_ses": "sesv2",
    "_secrets": "secretsmanager",
    "_connections": "apigatewaymanagementapi",
}

# boto3 operation -> (resource, IAM actions), from each service's "actions, resources and condition keys" page.
# A transaction is authorized item by item, as the item's own Put/Update/Delete/ConditionCheck.
ACTIONS = {
    ("dynamodb", "get_item"): ("table", {"dynamodb:GetItem"}),
    ("dynamodb", "put_item"): ("table", {"dynamodb:PutItem"}),
    ("dynamodb", "update_item"): ("table", {"dynamodb:UpdateItem"}),
    ("dynamodb", "delete_item"): ("table", {"dynamodb:DeleteItem"}),
    ("dynamodb", "query"): ("table", {"dynamodb:Query"}),
    ("dynamodb", "batch_get_item"): ("table", {"dynamodb:BatchGetItem"}),
    ("dynamodb", "batch_write_item"): ("table", {"dynamodb:BatchWriteItem"}),
    ("dynamodb", "transact_write_items"): (
        "table", {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
    ),
    ("s3", "put_object"): ("objects", {"s3:PutObject"}),
    ("s3", "get_object"): ("objects", {"s3:GetObject"}),
    ("s3", "head_object"): ("objects", {"s3:GetObject"}),
    ("s3", "generate_presigned_url"): ("objects", {"s3:GetObject"}),  # the link acts with the signer's rights
    ("s3", "copy_object"): ("objects", {"s3:GetObject", "s3:PutObject"}),
    ("s3", "delete_objects"): ("objects", {"s3:DeleteObject"}),
    ("s3", "list_objects_v2"): ("bucket", {"s3:ListBucket"}),
    ("sqs", "send_message"): ("events-queue", {"sqs:SendMessage"}),
    ("scheduler", "create_schedule"): ("schedules", {"scheduler:CreateSchedule"}),
    ("scheduler", "update_schedule"): ("schedules", {"scheduler:UpdateSchedule"}),
    ("scheduler", "delete_schedule"): ("schedules", {"scheduler:DeleteSchedule"}),
    ("sesv2", "send_email"): ("email", {"ses:SendEmail"}),  # SES v2's SendEmail is authorized as ses:SendEmail
    ("secretsmanager", "get_secret_value"): ("notification-secret", {"secretsmanager:GetSecretValue"}),
    ("apigatewaymanagementapi", "post_to_connection"): ("connections", {"execute-api:ManageConnections"}),
}  # fmt: skip

# Made by the events function only, not the API: notifications leave from the events queue (decision 0010), and
# pushes are posted to sockets by the events function alone (issue 36).
EVENTS_ONLY = {"email", "connections"}

# Creating or moving a schedule hands Scheduler the role it invokes the schedule function with.
PASSES_ROLE = {("scheduler", "create_schedule"), ("scheduler", "update_schedule")}

# Called by the local stack's stand-in for Scheduler (local/drivers.py) and by tests, never by a function.
LOCAL_ONLY = {("schedules.py", "list_armed"), ("schedules.py", "get")}

RESOURCES = {
    json.dumps({"Fn::GetAtt": ["WorkspaceTable", "Arn"]}): "table",
    json.dumps({"Fn::Sub": "${WorkspaceTable.Arn}/index/*"}): "index",
    json.dumps({"Fn::Sub": "${AttachmentsBucket.Arn}/*"}): "objects",
    json.dumps({"Fn::GetAtt": ["AttachmentsBucket", "Arn"]}): "bucket",
    json.dumps({"Fn::GetAtt": ["EventsQueue", "Arn"]}): "events-queue",
    json.dumps({"Fn::GetAtt": ["ScheduleDeadLetterQueue", "Arn"]}): "schedule-dead-letters",
    json.dumps({"Fn::GetAtt": ["SchedulerRole", "Arn"]}): "scheduler-role",
    json.dumps(
        {"Fn::Sub": "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/${ScheduleGroup}/*"}
    ): "schedules",
    json.dumps({"Ref": "NotificationSecret"}): "notification-secret",
    json.dumps({"Fn::Sub": "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/*"}): "email",
    json.dumps(
        {
            "Fn::Sub": "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${PushApi}/${PushStage}"
            "/POST/@connections/*"
        }
    ): "connections",
    json.dumps("*"): "*",
    **{
        json.dumps({"Fn::GetAtt": [group, "Arn"]}): "logs"
        for group in ("ApiLogGroup", "ScheduleLogGroup", "EventsLogGroup", "PushLogGroup")
    },
}


def _calls_in(path: Path) -> set[tuple[str, str]]:
    """(service, operation) of every boto3 call in one store module, paginators included."""
    found = set()
    for function in ast.walk(ast.parse(path.read_text())):
        if not isinstance(function, ast.FunctionDef) or (path.name, function.name) in LOCAL_ONLY:
            continue
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
            if name not in CLIENTS:
                continue
            operation = node.func.attr
            if operation == "get_paginator":
                operation = ast.literal_eval(node.args[0])
            found.add((CLIENTS[name], operation))
    return found


@cache
def code_calls() -> frozenset[tuple[str, str]]:
    return frozenset(call for path in sorted(STORE.glob("*.py")) for call in _calls_in(path))


def needed_grants() -> dict[str, set[str]]:
    """resource -> IAM actions, for everything the deployed code calls."""
    needed: dict[str, set[str]] = {}
    for call in code_calls():
        assert call in ACTIONS, f"{call} is called in store/ but has no IAM mapping in this test: add one"
        resource, actions = ACTIONS[call]
        needed.setdefault(resource, set()).update(actions)
    if any("IndexName" in path.read_text() for path in STORE.glob("*.py")):
        needed["index"] = {"dynamodb:Query"}
    if PASSES_ROLE & code_calls():
        needed["scheduler-role"] = {"iam:PassRole"}
    return needed


@cache
def translated() -> dict:
    assert TOOLS_PYTHON.exists(), "the SAM translator lives in .venv-tools: run `make lint` (or `make test`) once"
    done = subprocess.run(
        [str(TOOLS_PYTHON), str(ROOT / "scripts" / "translate_template.py")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return json.loads(done.stdout)


def statements(role: str) -> list[dict]:
    properties = translated()["Resources"][role]["Properties"]
    assert not properties.get("ManagedPolicyArns"), f"{role}: managed policies grant what nobody reviewed here"
    return [statement for policy in properties["Policies"] for statement in policy["PolicyDocument"]["Statement"]]


def grants(role: str) -> dict[str, set[str]]:
    granted: dict[str, set[str]] = {}
    for statement in statements(role):
        assert statement["Effect"] == "Allow"
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for resource in resources:
            granted.setdefault(RESOURCES[json.dumps(resource)], set()).update(actions)
    return granted


FUNCTION_ROLES = {
    "ApiFunction": "ApiFunctionRole",
    "ScheduleFunction": "ScheduleFunctionRole",
    "EventsFunction": "EventsFunctionRole",
    "PushFunction": "PushFunctionRole",
}


def test_every_function_runs_with_its_own_role():
    resources = translated()["Resources"]
    for function, role in FUNCTION_ROLES.items():
        assert resources[function]["Properties"]["Role"] == {"Fn::GetAtt": [role, "Arn"]}


def test_the_code_makes_calls_the_mapping_knows_and_never_scans():
    calls = code_calls()
    assert ("dynamodb", "transact_write_items") in calls and ("s3", "put_object") in calls
    assert not {operation for _, operation in calls} & {"scan", "put_bucket_lifecycle_configuration", "put_object_acl"}


def test_the_api_function_may_make_exactly_the_calls_the_code_makes():
    granted = grants("ApiFunctionRole")
    assert granted.pop("*") and granted.pop("logs") == {"logs:CreateLogStream", "logs:PutLogEvents"}
    logs = [s for s in statements("ApiFunctionRole") if s["Sid"] == "Logs"]
    assert logs and logs[0]["Resource"] == {"Fn::GetAtt": ["ApiLogGroup", "Arn"]}

    assert granted == {k: v for k, v in needed_grants().items() if k not in EVENTS_ONLY}


@pytest.mark.parametrize("role", ["ScheduleFunctionRole", "EventsFunctionRole", "PushFunctionRole"])
def test_the_workers_may_make_no_call_the_code_does_not(role):
    needed = needed_grants()
    for resource, actions in grants(role).items():
        if resource in ("*", "logs"):
            continue
        if resource == "schedule-dead-letters":  # Lambda's on-failure destination sends as the function
            assert (role, actions) == ("ScheduleFunctionRole", {"sqs:SendMessage"})
            continue
        if resource == "events-queue" and role == "EventsFunctionRole":  # the SQS event source polls as it,
            # and a notification held for quiet hours goes back on the queue
            assert actions == {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:SendMessage"}
            continue
        assert actions <= needed.get(resource, set()), (role, resource, actions - needed.get(resource, set()))


def test_both_workers_may_enqueue_a_notification():
    """The schedule function tells of a failed run, the events function holds one for quiet hours (decision 0010)."""
    for role in ("ScheduleFunctionRole", "EventsFunctionRole"):
        assert "sqs:SendMessage" in grants(role)["events-queue"], role


def test_the_events_function_touches_only_the_table_and_its_queue():
    assert set(grants("EventsFunctionRole")) == {
        "*", "logs", "table", "index", "events-queue", "email", "notification-secret", "connections"
    }  # fmt: skip


def test_only_the_events_function_posts_to_sockets_and_only_on_the_push_stage():
    """The one sender (issue 36): ManageConnections on POST @connections of the push stage, for no other role."""
    assert grants("EventsFunctionRole")["connections"] == {"execute-api:ManageConnections"}
    for role in ("ApiFunctionRole", "ScheduleFunctionRole", "PushFunctionRole"):
        assert "connections" not in grants(role), role
        assert "execute-api" not in json.dumps([s["Action"] for s in statements(role)]), role


# What the push function's handler calls: spending a ticket, checking its token, recording and forgetting a socket.
PUSH_FUNCTION_CALLS = ("take_ticket", "connect", "disconnect")  # store/push.py; the token through the accounts store


def _calls_of_methods(path: Path, names: tuple[str, ...]) -> set[tuple[str, str]]:
    """The boto3 calls made inside these methods of one store module (their own bodies)."""
    found = set()
    for function in ast.walk(ast.parse(path.read_text())):
        if isinstance(function, ast.FunctionDef) and function.name in names:
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    owner = node.func.value
                    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
                    if name in CLIENTS:
                        found.add((CLIENTS[name], node.func.attr))
    return found


def test_the_push_function_reads_and_writes_only_push_items_and_the_token_of_a_ticket():
    """Its own role, least privilege down to the items: each table action is held by dynamodb:LeadingKeys to the
    partitions its code touches (store/keys.py), and no action is granted that its calls do not need."""
    from agent_workspace.store import keys

    calls = _calls_of_methods(STORE / "push.py", PUSH_FUNCTION_CALLS)
    calls |= _calls_of_methods(STORE / "accounts.py", ("resolve_token",))  # $connect: is the minting token live?
    assert calls == {("dynamodb", "delete_item"), ("dynamodb", "get_item"), ("dynamodb", "transact_write_items")}
    granted = grants("PushFunctionRole")
    assert granted.pop("*") and granted.pop("logs") == {"logs:CreateLogStream", "logs:PutLogEvents"}
    # The transaction only puts (the connection and its listener item): PutItem, no UpdateItem or ConditionCheck.
    assert granted == {"table": {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"}}
    held = {}
    for statement in statements("PushFunctionRole"):
        if statement["Sid"] in ("Logs", "TracesHaveNoResourceLevelPermissions"):
            continue
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        prefixes = statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
        held.update({action: sorted(p.removesuffix("*") for p in prefixes) for action in actions})
    assert held == {
        "dynamodb:GetItem": [keys.token_pk("")],
        "dynamodb:PutItem": sorted(keys.PUSH_FUNCTION_PARTITIONS[:3]),
        "dynamodb:DeleteItem": sorted(keys.PUSH_FUNCTION_PARTITIONS[:3]),
    }
    assert (
        keys.push_ticket_pk(""), keys.push_connection_pk(""), keys.push_listeners_pk("", "")[:5], keys.token_pk("")
    ) == keys.PUSH_FUNCTION_PARTITIONS  # fmt: skip


def test_a_role_is_passed_only_to_scheduler_and_only_the_schedulers_role():
    for role in FUNCTION_ROLES.values():
        for statement in statements(role):
            if "iam:PassRole" in json.dumps(statement["Action"]):
                assert statement["Action"] in ("iam:PassRole", ["iam:PassRole"])
                assert statement["Resource"] == {"Fn::GetAtt": ["SchedulerRole", "Arn"]}
                assert statement["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}


def test_only_traces_are_granted_on_every_resource_as_x_ray_has_no_resource_level_permissions():
    for role in FUNCTION_ROLES.values():
        assert grants(role)["*"] == {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
