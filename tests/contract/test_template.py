"""template.yaml is the one declaration of the infrastructure; the code and the local stack follow it."""

from agent_workspace.local.template import load_template, resource_properties
from agent_workspace.store import keys

TEMPLATE = load_template()


def test_table_keys_and_index_match_the_store():
    table = resource_properties(TEMPLATE, "WorkspaceTable")
    assert table["KeySchema"] == [
        {"AttributeName": keys.PK, "KeyType": "HASH"},
        {"AttributeName": keys.SK, "KeyType": "RANGE"},
    ]
    queue, listing = table["GlobalSecondaryIndexes"]
    assert queue["IndexName"] == keys.GSI1
    assert [k["AttributeName"] for k in queue["KeySchema"]] == [keys.GSI1_PK, keys.GSI1_SK]
    assert listing["IndexName"] == keys.GSI2
    assert [k["AttributeName"] for k in listing["KeySchema"]] == [keys.GSI2_PK, keys.GSI2_SK]
    assert table["TimeToLiveSpecification"] == {"AttributeName": keys.TTL_ATTRIBUTE, "Enabled": True}


def test_table_is_on_demand_encrypted_and_recoverable():
    table = resource_properties(TEMPLATE, "WorkspaceTable")
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["SSESpecification"]["SSEEnabled"] is True


def test_bucket_is_private_encrypted_and_expires_objects():
    bucket = resource_properties(TEMPLATE, "AttachmentsBucket")
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert any("ExpirationInDays" in rule for rule in bucket["LifecycleConfiguration"]["Rules"])


def test_api_function_has_a_function_url_the_app_authenticates_and_tracing():
    function = resource_properties(TEMPLATE, "ApiFunction")
    assert function["FunctionUrlConfig"]["AuthType"] == "NONE"
    assert TEMPLATE["Globals"]["Function"]["Tracing"] == "Active"
    env = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    assert {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE", "WORKSPACE_TABLE_NAME"} <= set(env)
    assert "McpUrl" in TEMPLATE["Outputs"]


def test_events_queue_has_a_dead_letter_queue():
    queue = resource_properties(TEMPLATE, "EventsQueue")
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": "EventsDeadLetterQueue.Arn"}


def test_no_policy_grants_a_wildcard_resource():
    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "Resource":
                    resources = value if isinstance(value, list) else [value]
                    assert "*" not in resources
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(TEMPLATE["Resources"])


def _timeout(function: str) -> int:
    return resource_properties(TEMPLATE, function).get("Timeout", TEMPLATE["Globals"]["Function"]["Timeout"])


def test_events_consumer_reports_partial_batch_failures_and_the_queue_outwaits_it():
    consumer = resource_properties(TEMPLATE, "EventsFunction")
    (source,) = consumer["Events"].values()
    assert source["Type"] == "SQS"
    assert source["Properties"]["Queue"] == {"Fn::GetAtt": "EventsQueue.Arn"}
    assert source["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    queue = resource_properties(TEMPLATE, "EventsQueue")
    assert queue["VisibilityTimeout"] >= 6 * _timeout("EventsFunction")


def test_schedules_invoke_the_schedule_function_with_retries_and_a_dead_letter_queue():
    function = resource_properties(TEMPLATE, "ScheduleFunction")
    assert function["FunctionName"] == {"Fn::Sub": "${AWS::StackName}-schedule"}
    invoke = function["EventInvokeConfig"]
    assert 0 < invoke["MaximumRetryAttempts"] <= 2
    assert invoke["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": "ScheduleDeadLetterQueue.Arn"}
    env = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    # The ARN every schedule targets is the schedule function's, built from its fixed name.
    assert env["WORKSPACE_SCHEDULE_TARGET_ARN"]["Fn::Sub"].endswith(":function:${AWS::StackName}-schedule")
    assert env["WORKSPACE_SCHEDULE_GROUP"] == {"Ref": "ScheduleGroup"}
    assert env["WORKSPACE_SCHEDULE_DEAD_LETTER_ARN"] == {"Fn::GetAtt": "ScheduleDeadLetterQueue.Arn"}
    role = resource_properties(TEMPLATE, "SchedulerRole")
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    (policy,) = role["Policies"]
    actions = {s["Action"] for s in policy["PolicyDocument"]["Statement"]}
    assert actions == {"lambda:InvokeFunction", "sqs:SendMessage"}


def test_only_task_files_expire_and_template_files_live_outside_the_rule():
    from agent_workspace.store.blobs import EXPIRING_PREFIX, TEMPLATE_PREFIX

    rules = resource_properties(TEMPLATE, "AttachmentsBucket")["LifecycleConfiguration"]["Rules"]
    (expiring,) = [rule for rule in rules if "ExpirationInDays" in rule]
    assert expiring["Prefix"] == EXPIRING_PREFIX
    assert not TEMPLATE_PREFIX.startswith(EXPIRING_PREFIX)
