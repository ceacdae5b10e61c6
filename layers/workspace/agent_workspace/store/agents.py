"""The agent repo (decision 0009): each agent in its own partition `AGENT#<id>`, its @handle claimed in the
account's partition, the account's count of agents on the account record."""

from typing import Any

from boto3.dynamodb.conditions import Attr
from pydantic import TypeAdapter

from agent_workspace.domain.agents import Agent, PromptVersion
from agent_workspace.domain.errors import Conflict
from agent_workspace.store import keys
from agent_workspace.store.cursor import decode_cursor, encode_cursor
from agent_workspace.store.dynamo import batch_get, from_item, get_item, key, query_prefix, to_item, translating_errors
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if, revision_is

_AGENT: TypeAdapter[Agent] = TypeAdapter(Agent)
_PROMPT: TypeAdapter[PromptVersion] = TypeAdapter(PromptVersion)


class SlugTaken(Exception):
    """Another agent of the account has this @handle."""


class AgentCapReached(Exception):
    """The account holds its cap of agents."""


class RateSpent(Exception):
    """This connection spent its writes of this kind for the window."""


class AgentStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def create(self, agent: Agent, prompt: PromptVersion | None, most: int) -> None:
        """The record, its @handle and the account's count in one transaction (and its first prompt version)."""
        items: list[dict[str, Any]] = [
            self._put(_agent_item(agent), new=True),
            self._put(_slug_item(agent), new=True),
            {
                "Update": {
                    "TableName": self._table,
                    "Key": key(keys.account_pk(agent.account_id), keys.ACCOUNT_SK),
                    **Update()
                    .add("agents", 1)
                    .only_if(EXISTS & (Attr("agents").not_exists() | Attr("agents").lt(most)))
                    .params(),
                }
            },
        ]
        if prompt is not None:
            items.append(self._put(_prompt_item(prompt), new=True))
        try:
            with translating_errors():
                self._db.transact_write_items(TransactItems=items)
        except Conflict as conflict:
            reasons = (*conflict.reasons, None, None, None)
            if reasons[1] == "ConditionalCheckFailed":
                raise SlugTaken(agent.slug) from None
            if reasons[2] == "ConditionalCheckFailed":
                raise AgentCapReached() from None
            raise

    def get(self, agent_id: str, consistent: bool = False) -> Agent | None:
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.AGENT_SK, consistent)
        return _AGENT.validate_python(item) if item else None

    def id_of_slug(self, account_id: str, slug: str) -> str | None:
        item = get_item(self._db, self._table, keys.account_pk(account_id), keys.agent_slug_sk(slug), False)
        return item["agentId"] if item else None

    def of_account(self, account_id: str) -> list[Agent]:
        """The account's agents (at most its cap): one Query of the handles, one BatchGetItem of the records."""
        handles = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.AGENT_SLUG_PREFIX)
        wanted = [key(keys.agent_pk(h["agentId"]), keys.AGENT_SK) for h in handles]
        found = [_AGENT.validate_python(from_item(item)) for item in batch_get(self._db, self._table, wanted, False)]
        return sorted(found, key=lambda agent: agent.created_at)

    def replace(self, agent: Agent, previous_revision: int) -> None:
        """The record as edited (not its @handle), if still at the revision it was read at (else `Conflict`)."""
        with translating_errors(f"agent {agent.id} changed meanwhile; read it again"):
            self._db.put_item(
                TableName=self._table,
                Item=to_item(_agent_item(agent)),
                # and at the live prompt version read: a new version written meanwhile is not undone
                **only_if(revision_is(previous_revision) & Attr("promptVersion").eq(agent.prompt_version)),
            )

    def add_prompt(self, agent: Agent, prompt: PromptVersion, rate: tuple[str, int, int] | None) -> None:
        """The next prompt version, live at once, if the live version is still the one it was based on; `rate`
        (counter key, limit, expiry) counts it against the connection's daily versions in the same transaction."""
        based_on = prompt.version - 1
        live = Attr("promptVersion").eq(based_on) & Attr("promptLocked").ne(True)
        items: list[dict[str, Any]] = [
            {
                "Update": {
                    "TableName": self._table,
                    "Key": key(keys.agent_pk(agent.id), keys.AGENT_SK),
                    **Update()
                    .set("promptVersion", prompt.version)
                    .set("updatedAt", prompt.created_at)
                    .only_if(live)
                    .params(),
                }
            },
            self._put(_prompt_item(prompt), new=True),
        ]
        if rate is not None:
            items.append(self._counted(agent.id, *rate))
        try:
            with translating_errors():
                self._db.transact_write_items(TransactItems=items)
        except Conflict as conflict:
            if rate is not None and conflict.reasons[2:3] == ("ConditionalCheckFailed",):
                raise RateSpent() from None
            raise

    def prompt(self, agent_id: str, version: int) -> PromptVersion | None:
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.prompt_sk(version), False)
        return _PROMPT.validate_python(item) if item else None

    def prompt_versions(self, agent_id: str, limit: int, cursor: str | None) -> tuple[list[PromptVersion], str | None]:
        """Newest first, without bodies."""
        pk = keys.agent_pk(agent_id)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": pk, ":prefix": keys.PROMPT_SK_PREFIX}),
            "ProjectionExpression": "PK, SK, agentId, version, createdAt, author, tokenId, harness, note",
            "ScanIndexForward": False,
            "Limit": limit,
        }
        start = decode_cursor(cursor, {keys.PK: pk}, (keys.SK,))
        if start is not None:
            request["ExclusiveStartKey"] = start
        with translating_errors():
            page = self._db.query(**request)
        versions = [_PROMPT.validate_python({**from_item(item), "body": ""}) for item in page.get("Items", [])]
        return versions, encode_cursor(page.get("LastEvaluatedKey"))

    def _counted(self, agent_id: str, sk: str, most: int, expires_at: int) -> dict[str, Any]:
        update = (
            Update()
            .add("n", 1)
            .set(keys.TTL_ATTRIBUTE, expires_at)
            .only_if(Attr("n").not_exists() | Attr("n").lt(most))
        )
        return {"Update": {"TableName": self._table, "Key": key(keys.agent_pk(agent_id), sk), **update.params()}}

    def _put(self, item: dict[str, Any], new: bool = False) -> dict[str, Any]:
        return {"Put": {"TableName": self._table, "Item": to_item(item), **(only_if(NEW_ITEM) if new else {})}}


def _agent_item(agent: Agent) -> dict[str, Any]:
    return {
        keys.PK: keys.agent_pk(agent.id),
        keys.SK: keys.AGENT_SK,
        **_AGENT.dump_python(agent, by_alias=True, exclude_none=True),
    }


def _slug_item(agent: Agent) -> dict[str, Any]:
    return {
        keys.PK: keys.account_pk(agent.account_id),
        keys.SK: keys.agent_slug_sk(agent.slug),
        "agentId": agent.id,
    }


def _prompt_item(prompt: PromptVersion) -> dict[str, Any]:
    return {
        keys.PK: keys.agent_pk(prompt.agent_id),
        keys.SK: keys.prompt_sk(prompt.version),
        **_PROMPT.dump_python(prompt, by_alias=True, exclude_none=True),
    }
