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


def test_no_policy_grants_a_wildcard_resource_but_x_ray_traces():
    """X-Ray's PutTraceSegments and PutTelemetryRecords have no resource-level permissions; nothing else may use *."""

    def walk(node):
        if isinstance(node, dict):
            if "Resource" in node:
                resources = node["Resource"] if isinstance(node["Resource"], list) else [node["Resource"]]
                if "*" in resources:
                    assert node["Action"] == ["xray:PutTraceSegments", "xray:PutTelemetryRecords"], node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(TEMPLATE["Resources"])


FUNCTIONS = ["ApiFunction", "ScheduleFunction", "EventsFunction", "PushFunction"]


def test_every_function_logs_json_to_its_own_group_kept_for_the_retention_parameter():
    assert TEMPLATE["Parameters"]["LogRetentionDays"]["Default"] == 30
    for function in FUNCTIONS:
        logging = resource_properties(TEMPLATE, function)["LoggingConfig"]
        assert logging["LogFormat"] == "JSON"
        group = TEMPLATE["Resources"][logging["LogGroup"]["Ref"]]
        assert group["Type"] == "AWS::Logs::LogGroup"
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def _alarms() -> list[dict]:
    return [r["Properties"] for r in TEMPLATE["Resources"].values() if r["Type"] == "AWS::CloudWatch::Alarm"]


def _alarmed(namespace: str, metric: str) -> list[dict]:
    return [alarm for alarm in _alarms() if (alarm.get("Namespace"), alarm.get("MetricName")) == (namespace, metric)]


def test_alarms_watch_both_dead_letter_queues_every_functions_errors_and_throttles_and_table_throttling():
    queues = [a["Dimensions"][0]["Value"] for a in _alarmed("AWS/SQS", "ApproximateNumberOfMessagesVisible")]
    assert sorted(q["Fn::GetAtt"] for q in queues) == [
        "EventsDeadLetterQueue.QueueName",
        "ScheduleDeadLetterQueue.QueueName",
    ]
    for metric in ("Errors", "Throttles"):
        watched = sorted(a["Dimensions"][0]["Value"]["Ref"] for a in _alarmed("AWS/Lambda", metric))
        assert watched == sorted(FUNCTIONS), metric
    table = [a for a in _alarms() if "Metrics" in a]
    metrics = {m["MetricStat"]["Metric"]["MetricName"] for a in table for m in a["Metrics"] if "MetricStat" in m}
    assert metrics == {"ReadThrottleEvents", "WriteThrottleEvents"}
    for alarm in _alarms():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert alarm["TreatMissingData"] == "notBreaching"


def test_the_alarm_topic_mails_the_optional_address():
    subscription = TEMPLATE["Resources"]["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert subscription["Properties"]["Endpoint"] == {"Ref": "AlarmEmail"}
    assert TEMPLATE["Parameters"]["AlarmEmail"]["Default"] == ""


def test_the_api_function_is_capped_snapstarted_and_served_from_its_published_alias():
    api = resource_properties(TEMPLATE, "ApiFunction")
    cap = api["ReservedConcurrentExecutions"]["Fn::If"]
    assert cap[:2] == ["CapsApiConcurrency", {"Ref": "ApiReservedConcurrency"}]
    assert api["SnapStart"] == {"ApplyOn": {"Ref": "ApiSnapStart"}}
    assert TEMPLATE["Parameters"]["ApiSnapStart"]["Default"] == "PublishedVersions"
    assert api["AutoPublishAlias"] == "live"  # SAM then points the Function URL at the alias


def test_what_deleting_the_stack_keeps_is_explicit():
    resources = TEMPLATE["Resources"]
    assert resources["WorkspaceTable"]["Properties"]["DeletionProtectionEnabled"] is True
    for logical_id in ("WorkspaceTable", "AttachmentsBucket", "EventsDeadLetterQueue", "ScheduleDeadLetterQueue"):
        assert resources[logical_id]["DeletionPolicy"] == "Retain", logical_id
    for logical_id in ("EventsQueue",):
        assert resources[logical_id]["DeletionPolicy"] == "Delete", logical_id


def test_a_failed_event_message_is_retried_within_minutes():
    assert resource_properties(TEMPLATE, "EventsQueue")["VisibilityTimeout"] <= 600


def _timeout(function: str) -> int:
    return resource_properties(TEMPLATE, function).get("Timeout", TEMPLATE["Globals"]["Function"].get("Timeout", 3))


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


def _resources_of(kind: str) -> dict[str, dict]:
    return {name: r for name, r in TEMPLATE["Resources"].items() if r["Type"] == kind}


def test_the_push_api_is_a_websocket_api_whose_three_routes_reach_the_push_function():
    api = resource_properties(TEMPLATE, "PushApi")
    assert api["ProtocolType"] == "WEBSOCKET"
    assert api["RouteSelectionExpression"] == "$request.body.type"
    integration = resource_properties(TEMPLATE, "PushIntegration")
    assert integration["IntegrationType"] == "AWS_PROXY"
    assert "${PushFunction.Arn}/invocations" in integration["IntegrationUri"]["Fn::Sub"]
    routes = {r["Properties"]["RouteKey"]: r["Properties"] for r in _resources_of("AWS::ApiGatewayV2::Route").values()}
    assert set(routes) == {"$connect", "$disconnect", "$default"}
    for route in routes.values():
        assert route["ApiId"] == {"Ref": "PushApi"}
        assert route["Target"] == {"Fn::Sub": "integrations/${PushIntegration}"}
    # The handler authorizes $connect by its ticket (a browser sends no headers on a WebSocket).
    assert routes["$connect"]["AuthorizationType"] == "NONE"
    # A pong goes back on the socket only through the $default route's response.
    (response,) = _resources_of("AWS::ApiGatewayV2::RouteResponse").values()
    assert response["Properties"]["RouteId"] == {"Ref": "PushDefaultRoute"}
    assert routes["$default"]["RouteResponseSelectionExpression"] == "$default"
    permission = resource_properties(TEMPLATE, "PushFunctionInvoke")
    assert (permission["Principal"], permission["FunctionName"]) == (
        "apigateway.amazonaws.com",
        {"Ref": "PushFunction"},
    )
    assert permission["SourceArn"]["Fn::Sub"].endswith(":${PushApi}/${PushStage}/*")


def test_the_push_stage_deploys_itself_and_is_throttled():
    stage = TEMPLATE["Resources"]["PushStage"]
    assert stage["Properties"]["AutoDeploy"] is True
    assert set(stage["DependsOn"]) == {"PushConnectRoute", "PushDisconnectRoute", "PushDefaultRoute"}
    throttling = stage["Properties"]["DefaultRouteSettings"]
    assert 0 < throttling["ThrottlingRateLimit"] <= throttling["ThrottlingBurstLimit"]


def test_the_functions_that_publish_know_the_push_url_and_the_sender_its_callback():
    url = TEMPLATE["Outputs"]["PushUrl"]["Value"]
    assert url == {"Fn::Sub": "${PushApi.ApiEndpoint}/${PushStage}"}
    for function in ("ApiFunction", "ScheduleFunction", "EventsFunction"):
        assert resource_properties(TEMPLATE, function)["Environment"]["Variables"]["WORKSPACE_PUSH_URL"] == url
    callback = resource_properties(TEMPLATE, "EventsFunction")["Environment"]["Variables"][
        "WORKSPACE_PUSH_CALLBACK_URL"
    ]
    assert callback["Fn::Sub"].startswith("https://${PushApi}.execute-api.") and callback["Fn::Sub"].endswith(
        "/${PushStage}"
    )
    assert "Environment" not in resource_properties(TEMPLATE, "PushFunction")  # it publishes nothing
