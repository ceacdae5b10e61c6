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
