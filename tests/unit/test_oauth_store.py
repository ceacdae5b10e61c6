"""The OAuth store's transactions: a collision with another transaction in flight is retried until a condition
decides, since a code or refresh token used twice at once must be told by its condition (and revoked)."""

from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_workspace.domain.errors import Conflict
from agent_workspace.store import oauth as oauth_store
from agent_workspace.store.oauth import OAuthStore


def cancelled(*reasons: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": [{"Code": reason} for reason in reasons],
        },
        "TransactWriteItems",
    )


class Table:
    def __init__(self, *outcomes: Exception | None) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    def transact_write_items(self, **_: Any) -> None:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if outcome is not None:
            raise outcome


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(oauth_store, "back_off", lambda attempt: None)


def test_a_transaction_that_only_collided_is_tried_again_until_it_goes_through():
    table = Table(cancelled("TransactionConflict", "None"), cancelled("None", "TransactionConflict"), None)
    OAuthStore(table, "t")._transact([{}], "used already")
    assert table.calls == 3


def test_a_failed_condition_decides_at_once_with_its_reasons():
    table = Table(cancelled("TransactionConflict", "None"), cancelled("ConditionalCheckFailed", "None"))
    with pytest.raises(Conflict) as refused:
        OAuthStore(table, "t")._transact([{}], "used already")
    assert refused.value.reasons == ("ConditionalCheckFailed", None) and table.calls == 2
