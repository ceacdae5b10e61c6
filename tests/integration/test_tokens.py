"""Tokens under hostile use: how many may be minted, the account's last human token, what a made-up token costs.

Over real HTTP against uvicorn; DynamoDB requests are counted with botocore's `before-call` event on the
session's client (as test_request_budget.py counts them), so "costs a read, not a write" is asserted exactly.
"""

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from agent_workspace.domain.tokens import AGENT_TOKENS_PER_WORKSPACE, HUMAN_TOKENS_PER_ACCOUNT, WORKSPACES_PER_ACCOUNT
from agent_workspace.services import accounts
from agent_workspace.store import keys
from agent_workspace.store.accounts import AccountStore
from agent_workspace.store.dynamo import key
from tests.integration.test_auth_and_api import workspace_get
from tests.support import assert_problem, bearer

DDB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


@pytest.fixture
def requests_sent(runtime):
    """The DynamoDB operations the app sends while the test runs, by name (cleared by the test as it goes)."""
    sent: Counter[str] = Counter()
    events = runtime.clients.dynamodb.meta.events

    def note(model, **_) -> None:
        sent[model.name] += 1

    events.register("before-call.dynamodb", note)
    try:
        yield sent
    finally:
        events.unregister("before-call.dynamodb", note)


def agent_tokens(live, seeded) -> str:
    return f"{live.url}/api/workspaces/{seeded.workspace_id}/tokens"


def human_tokens(live) -> str:
    return f"{live.url}/api/tokens"


def mint(url: str, token: str) -> httpx.Response:
    return httpx.post(url, headers=bearer(token), timeout=10)


def revoke(url: str, token_id: str, token: str) -> httpx.Response:
    return httpx.delete(f"{url}/{token_id}", headers=bearer(token), timeout=10)


def listed(url: str, token: str) -> list[dict]:
    response = httpx.get(url, headers=bearer(token), timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


# -- caps on minting -----------------------------------------------------------------------------


def test_a_workspace_holds_at_most_its_cap_of_agent_tokens_and_revoking_one_frees_a_slot(live, seeded):
    url = agent_tokens(live, seeded)
    minted = [mint(url, seeded.human_token) for _ in range(AGENT_TOKENS_PER_WORKSPACE - 1)]  # the seed holds one
    assert {m.status_code for m in minted} == {201}

    refused = mint(url, seeded.human_token)
    assert_problem(refused, 409, f"{AGENT_TOKENS_PER_WORKSPACE} agent tokens", "revoke one")
    assert len(listed(url, seeded.human_token)) == AGENT_TOKENS_PER_WORKSPACE

    assert revoke(url, minted[0].json()["id"], seeded.human_token).status_code == 204
    again = mint(url, seeded.human_token)
    assert again.status_code == 201
    assert workspace_get(live, again.json()["agentToken"]).status_code == 200


def test_an_account_holds_at_most_its_cap_of_human_tokens_and_revoking_one_frees_a_slot(live, seeded):
    url = human_tokens(live)
    minted = [mint(url, seeded.human_token) for _ in range(HUMAN_TOKENS_PER_ACCOUNT - 1)]
    assert {m.status_code for m in minted} == {201}

    refused = mint(url, seeded.human_token)
    assert_problem(refused, 409, f"{HUMAN_TOKENS_PER_ACCOUNT} human tokens", "revoke one")

    assert revoke(url, minted[-1].json()["id"], seeded.human_token).status_code == 204
    assert mint(url, seeded.human_token).status_code == 201


def test_concurrent_mints_never_pass_the_cap(live, seeded):
    url = agent_tokens(live, seeded)
    with ThreadPoolExecutor(max_workers=8) as pool:
        attempts = AGENT_TOKENS_PER_WORKSPACE + 10
        statuses = Counter(pool.map(lambda _: mint(url, seeded.human_token).status_code, range(attempts)))
    assert statuses == {201: AGENT_TOKENS_PER_WORKSPACE - 1, 409: attempts - (AGENT_TOKENS_PER_WORKSPACE - 1)}
    assert len(listed(url, seeded.human_token)) == AGENT_TOKENS_PER_WORKSPACE


def test_owners_stored_before_tokens_were_counted_are_counted_from_their_tokens(live, runtime, seeded):
    """A workspace or account written by an earlier version has no count: the first mint or revocation counts."""
    minted = mint(human_tokens(live), seeded.human_token).json()
    for sk in (keys.ACCOUNT_SK, keys.workspace_sk(seeded.workspace_id)):
        runtime.clients.dynamodb.update_item(
            TableName=runtime.settings.table_name,
            Key=key(keys.account_pk(seeded.account_id), sk),
            UpdateExpression="REMOVE tokenCount",
        )
    assert revoke(human_tokens(live), minted["id"], seeded.human_token).status_code == 204
    assert_problem(
        revoke(human_tokens(live), listed(human_tokens(live), seeded.human_token)[0]["id"], seeded.human_token),
        409,
        "last human token",
    )

    url = agent_tokens(live, seeded)
    statuses = Counter(mint(url, seeded.human_token).status_code for _ in range(AGENT_TOKENS_PER_WORKSPACE))
    assert statuses == {201: AGENT_TOKENS_PER_WORKSPACE - 1, 409: 1}


def workspaces(live) -> str:
    return f"{live.url}/api/workspaces"


def make_workspace(live, token: str, title: str = "w") -> httpx.Response:
    return httpx.post(workspaces(live), headers=bearer(token), json={"title": title}, timeout=10)


def test_an_account_holds_at_most_its_cap_of_workspaces(live, runtime, seeded):
    """Each workspace brings its own agent tokens, each with its own rate limit: uncapped, workspaces multiply it."""
    for n in range(WORKSPACES_PER_ACCOUNT - 2):  # the seed made one; the last one below goes over REST
        accounts.create_workspace(runtime.accounts, seeded.account_id, f"w{n}", "")
    assert make_workspace(live, seeded.human_token).status_code == 201

    refused = make_workspace(live, seeded.human_token, "one too many")
    assert_problem(refused, 409, f"{WORKSPACES_PER_ACCOUNT} workspaces", "most it may hold")
    listing = httpx.get(workspaces(live), headers=bearer(seeded.human_token), timeout=10).json()
    assert len(listing) == WORKSPACES_PER_ACCOUNT
    assert "one too many" not in {w["title"] for w in listing}


def test_concurrent_workspace_creations_never_pass_the_cap(live, runtime, seeded):
    for n in range(WORKSPACES_PER_ACCOUNT - 5):
        accounts.create_workspace(runtime.accounts, seeded.account_id, f"w{n}", "")
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = Counter(pool.map(lambda n: make_workspace(live, seeded.human_token).status_code, range(12)))
    assert statuses == {201: 4, 409: 8}


def test_accounts_stored_before_workspaces_were_counted_are_counted_from_their_workspaces(live, runtime, seeded):
    for n in range(WORKSPACES_PER_ACCOUNT - 2):
        accounts.create_workspace(runtime.accounts, seeded.account_id, f"w{n}", "")
    runtime.clients.dynamodb.update_item(
        TableName=runtime.settings.table_name,
        Key=key(keys.account_pk(seeded.account_id), keys.ACCOUNT_SK),
        UpdateExpression="REMOVE workspaceCount",
    )
    statuses = Counter(make_workspace(live, seeded.human_token).status_code for _ in range(3))
    assert statuses == {201: 1, 409: 2}


# -- the account's last human token --------------------------------------------------------------


def test_the_accounts_last_human_token_cannot_be_revoked(live, seeded):
    url = human_tokens(live)
    [only] = listed(url, seeded.human_token)
    assert_problem(revoke(url, only["id"], seeded.human_token), 409, "last human token", "locked out")
    assert listed(url, seeded.human_token) == [only]  # still there, still working

    spare = mint(url, seeded.human_token).json()
    assert revoke(url, only["id"], seeded.human_token).status_code == 204  # with a spare, any one may go
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token)).status_code == 401
    assert_problem(revoke(url, spare["id"], spare["humanToken"]), 409, "last human token")


def test_a_workspaces_last_agent_token_can_be_revoked(live, seeded):
    """Only human tokens administer the account; a workspace without agent tokens gets a new one minted."""
    url = agent_tokens(live, seeded)
    [only] = listed(url, seeded.human_token)
    assert revoke(url, only["id"], seeded.human_token).status_code == 204
    assert listed(url, seeded.human_token) == []
    assert mint(url, seeded.human_token).status_code == 201


def test_two_concurrent_revocations_of_the_last_two_human_tokens_leave_one(live, runtime, seeded):
    url = human_tokens(live)
    spare = mint(url, seeded.human_token).json()
    [original] = [t for t in listed(url, seeded.human_token) if t["id"] != spare["id"]]
    # Both revocations read their token before either writes: only the write itself can tell them apart.
    both_read = threading.Barrier(2, timeout=10)
    arrivals = []

    def hold(**_) -> None:
        if len(arrivals) < 2:
            arrivals.append(1)
            both_read.wait()

    events = runtime.clients.dynamodb.meta.events
    events.register("before-call.dynamodb.TransactWriteItems", hold)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = list(
                pool.map(
                    lambda pair: revoke(url, pair[0], pair[1]),
                    [(original["id"], seeded.human_token), (spare["id"], spare["humanToken"])],
                )
            )
    finally:
        events.unregister("before-call.dynamodb.TransactWriteItems", hold)
    assert sorted(o.status_code for o in outcomes) == [204, 409]
    assert_problem(next(o for o in outcomes if o.status_code == 409), 409, "last human token")
    survivor = seeded.human_token if outcomes[1].status_code == 204 else spare["humanToken"]
    assert len(listed(url, survivor)) == 1


# -- what a token lookup costs -------------------------------------------------------------------


def test_an_unknown_token_is_refused_after_one_read_and_no_write(live, seeded, requests_sent):
    for attempt in range(3):
        assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(f"aw_human_made-up-{attempt}")).status_code == 401
        assert workspace_get(live, f"aw_agent_made-up-{attempt}").status_code == 401
    assert requests_sent == {"GetItem": 6}


def test_a_known_token_costs_one_write_per_request_once_this_instance_has_seen_it(live, seeded, requests_sent):
    """The first request of a token on an instance reads it first (one read per instance, not per request);
    from then on the one conditional UpdateItem resolves and counts it, as before."""
    listing = f"{live.url}/api/workspaces"
    # All four requests must fall in one rate-limit minute: across a boundary a count fails and opens the next
    # minute, one UpdateItem more. So start early in a minute (a wait of at most 15 seconds, not a retry).
    left = 60 - time.time() % 60
    if left < 15:
        time.sleep(left + 0.1)
    requests_sent.clear()
    assert httpx.get(listing, headers=bearer(seeded.human_token)).status_code == 200
    # The read, the count (failing: no minute open yet), the minute opened, the listing's Query.
    assert requests_sent == {"GetItem": 1, "UpdateItem": 2, "Query": 1}
    requests_sent.clear()
    for _ in range(3):
        assert httpx.get(listing, headers=bearer(seeded.human_token)).status_code == 200
    assert requests_sent == {"UpdateItem": 3, "Query": 3}


def test_a_token_revoked_elsewhere_while_known_here_costs_one_failed_write_then_only_reads(
    live, runtime, seeded, requests_sent
):
    minted = mint(agent_tokens(live, seeded), seeded.human_token).json()
    assert workspace_get(live, minted["agentToken"]).status_code == 200  # known on this instance from now on
    another_instance = AccountStore(runtime.clients.dynamodb, runtime.settings.table_name)
    another_instance.revoke_token(seeded.account_id, seeded.workspace_id, minted["id"])
    requests_sent.clear()

    assert workspace_get(live, minted["agentToken"]).status_code == 401
    assert requests_sent == {"UpdateItem": 1}  # the conditional write finds no token and forgets it
    requests_sent.clear()
    assert workspace_get(live, minted["agentToken"]).status_code == 401
    assert requests_sent == {"GetItem": 1}
    assert not DDB_WRITES & set(requests_sent)


def test_a_token_revoked_on_this_instance_costs_only_a_read_from_its_next_use(live, seeded, requests_sent):
    minted = mint(agent_tokens(live, seeded), seeded.human_token).json()
    assert workspace_get(live, minted["agentToken"]).status_code == 200
    assert revoke(agent_tokens(live, seeded), minted["id"], seeded.human_token).status_code == 204
    requests_sent.clear()
    assert workspace_get(live, minted["agentToken"]).status_code == 401
    assert requests_sent == {"GetItem": 1}
