"""The local stand-in for AWS must not grow without bound while `make serve` runs for days, and must answer
only the local stack's own clients: it holds every token, so a web page that finds its port gets nothing."""

import httpx
import pytest
from moto.dynamodb.models.table import Table

from agent_workspace.local.stack import MotoServer
from agent_workspace.services.tasks import Actor, NewTask, create_task
from tests.support import download_presigned


def test_transactions_leave_no_copies_of_the_table_behind(runtime, seeded):
    # Every task create is a TransactWriteItems, for which moto deep-copies the whole table.
    actor = Actor("human", seeded.account_id, seeded.workspace_id, "seed")
    create_task(runtime, actor, NewTask(title="warm-up", body=""))
    for number in range(30):
        create_task(runtime, actor, NewTask(title=f"task {number}", body=""))

    assert len(Table.instances_tracked) <= 1  # at most the copy of the request in flight
    counts = runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts
    assert counts["notstarted"] == 31  # the tracking went, the data stayed


# -- only the local stack's own clients reach it ------------------------------------------------------

EVIL = "https://evil.example"


def _no_cors(response: httpx.Response) -> bool:
    return not any(name.lower().startswith("access-control-") for name in response.headers)


def test_a_page_from_another_origin_can_neither_preflight_nor_call_moto(moto_endpoint, runtime):
    preflight = httpx.options(
        f"{moto_endpoint}/",
        headers={
            "Origin": EVIL,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-amz-target",
        },
    )
    scan = httpx.post(
        f"{moto_endpoint}/",
        headers={
            "Origin": EVIL,
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.Scan",
            "Authorization": "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=00",
        },
        json={"TableName": runtime.settings.table_name},
    )

    assert (preflight.status_code, scan.status_code) == (403, 403)
    assert _no_cors(preflight) and _no_cors(scan)
    assert "Items" not in scan.text


def test_a_request_without_this_process_s_signature_is_refused(moto_endpoint, runtime):
    import boto3
    from botocore.exceptions import ClientError

    browser_like = httpx.get(f"{moto_endpoint}/{runtime.settings.attachments_bucket}")  # an <img>: no Origin, no auth
    rebound = httpx.get(f"{moto_endpoint}/", headers={"Host": "evil.example"})  # DNS rebinding: a foreign Host
    guessed = boto3.client(  # moto's usual fake credentials: any signature used to do
        "dynamodb", region_name="us-east-1", endpoint_url=moto_endpoint,
        aws_access_key_id="local", aws_secret_access_key="local", aws_session_token="local",
    )  # fmt: skip

    assert (browser_like.status_code, rebound.status_code) == (403, 403)
    with pytest.raises(ClientError) as refused:
        guessed.scan(TableName=runtime.settings.table_name)
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    # The app's own clients, signing with the process's secret, still get through.
    assert runtime.clients.dynamodb.describe_table(TableName=runtime.settings.table_name)["Table"]["TableName"]


def test_a_presigned_link_opens_its_own_object_and_nothing_else(runtime):
    runtime.blobs.put("workspaces/w/tasks/t/a", b"mine", "text/plain")
    runtime.blobs.put("workspaces/w/tasks/t/b", b"someone else's", "text/plain")
    link = runtime.blobs.link("workspaces/w/tasks/t/a", "a.txt", 60)

    assert download_presigned(link).content == b"mine"
    assert httpx.get(link.replace("/t/a?", "/t/b?")).status_code == 403  # the signature covers the key
    assert httpx.get(link, headers={"Origin": EVIL}).status_code == 403


def test_moto_never_listens_beyond_loopback():
    with pytest.raises(ValueError, match="loopback"):
        MotoServer("0.0.0.0")
