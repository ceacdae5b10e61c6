"""The agent repo (decision 0009): each agent in its own partition `AGENT#<id>`, its @handle claimed in the
account's partition, the account's count of agents on the account record."""

from typing import Any

from boto3.dynamodb.conditions import Attr
from pydantic import TypeAdapter

from agent_workspace.domain.agent_records import Activity, Profile, Session, Share, TransferOffer
from agent_workspace.domain.agents import Agent, PromptVersion
from agent_workspace.domain.errors import Conflict
from agent_workspace.store import keys
from agent_workspace.store.agent_writes import AgentWrite
from agent_workspace.store.cursor import cursor_after, decode_cursor, encode_cursor
from agent_workspace.store.dynamo import (
    batch_delete,
    batch_get,
    from_item,
    get_item,
    key,
    query_all,
    query_prefix,
    to_item,
    translating_errors,
)
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if, revision_is

_AGENT: TypeAdapter[Agent] = TypeAdapter(Agent)
_PROMPT: TypeAdapter[PromptVersion] = TypeAdapter(PromptVersion)
_SESSION: TypeAdapter[Session] = TypeAdapter(Session)
_PROFILE: TypeAdapter[Profile] = TypeAdapter(Profile)
_ACTIVITY: TypeAdapter[Activity] = TypeAdapter(Activity)
_SHARE: TypeAdapter[Share] = TypeAdapter(Share)
_OFFER: TypeAdapter[TransferOffer] = TypeAdapter(TransferOffer)
_ACTIVITY_READ = 300  # entries a filtered activity listing reads per call


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

    def create(
        self,
        agent: Agent,
        prompt: PromptVersion | None,
        most: int,
        profiles: tuple[Profile, ...] = (),
        entry: Activity | None = None,
    ) -> None:
        """The record, its @handle and the account's count in one transaction (and its first prompt version and
        profiles)."""
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
        if entry is not None:
            values = _ACTIVITY.dump_python(entry, by_alias=True, exclude_none=True)
            items.append(
                self._put({**values, keys.PK: keys.agent_pk(agent.id), keys.SK: keys.agent_activity_sk(entry.id)})
            )
        for profile in profiles:
            values = _PROFILE.dump_python(profile, by_alias=True, exclude_none=True)
            items.append(
                self._put({**values, keys.PK: keys.agent_pk(agent.id), keys.SK: keys.profile_sk(profile.harness)})
            )
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

    def with_session(self, agent_id: str, session_id: str) -> tuple[Agent | None, Session | None]:
        """The agent's record and one of its load sessions, in one consistent BatchGetItem (both live in the
        agent's partition): a write that rides on the session learns its harness without a request more."""
        pk = keys.agent_pk(agent_id)
        wanted = [key(pk, keys.AGENT_SK), key(pk, keys.session_sk(session_id))]
        found = {item[keys.SK]: item for item in map(from_item, batch_get(self._db, self._table, wanted))}
        record, session = found.get(keys.AGENT_SK), found.get(keys.session_sk(session_id))
        return (
            _AGENT.validate_python(record) if record else None,
            _SESSION.validate_python(session) if session else None,
        )

    def id_of_slug(self, account_id: str, slug: str, consistent: bool = False) -> str | None:
        item = get_item(self._db, self._table, keys.account_pk(account_id), keys.agent_slug_sk(slug), consistent)
        return item["agentId"] if item else None

    def of_account(self, account_id: str) -> list[Agent]:
        """The account's agents (at most its cap): one Query of the handles, one BatchGetItem of the records."""
        handles = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.AGENT_SLUG_PREFIX)
        return self.many([h["agentId"] for h in handles])

    def many(self, agent_ids: list[str]) -> list[Agent]:
        """These agents' records, oldest first (one BatchGetItem per 100)."""
        wanted = [key(keys.agent_pk(agent_id), keys.AGENT_SK) for agent_id in agent_ids]
        found = [_AGENT.validate_python(from_item(item)) for item in batch_get(self._db, self._table, wanted, False)]
        return sorted(found, key=lambda agent: agent.created_at)

    def replace(self, agent: Agent, previous_revision: int) -> None:
        """The fields a person or agent edits (not the counts other writes keep), if still at the revision read."""
        update = Update().set("revision", agent.revision).set("updatedAt", agent.updated_at)
        for name in ("name", "slug", "description", "accent", "primaryHarness"):
            value = _AGENT.dump_python(agent, by_alias=True).get(name)
            update = update.set(name, value) if value is not None else update.remove(name)
        with translating_errors(f"agent {agent.id} changed meanwhile; read it again"):
            self._db.update_item(
                TableName=self._table,
                Key=key(keys.agent_pk(agent.id), keys.AGENT_SK),
                **update.only_if(revision_is(previous_revision)).params(),
            )

    def add_prompt(
        self, agent: Agent, prompt: PromptVersion, rate: tuple[str, int, int] | None, entry: Activity | None = None
    ) -> None:
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
        if entry is not None:
            items.append(
                self._put(
                    {
                        **_ACTIVITY.dump_python(entry, by_alias=True, exclude_none=True),
                        keys.PK: keys.agent_pk(agent.id),
                        keys.SK: keys.agent_activity_sk(entry.id),
                    }
                )
            )
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
        start = decode_cursor(cursor, {keys.PK: pk}, (keys.SK,), keys.PROMPT_SK_PREFIX)
        if start is not None:
            request["ExclusiveStartKey"] = start
        with translating_errors():
            page = self._db.query(**request)
        versions = [_PROMPT.validate_python({**from_item(item), "body": ""}) for item in page.get("Items", [])]
        return versions, encode_cursor(page.get("LastEvaluatedKey"))

    def open_session(self, session: Session, entry: Activity, mentions_seen: int) -> None:
        """A load: the session, the record's last session (and the mentions it showed read), and an activity
        entry, in one transaction."""
        write = AgentWrite(self._table, session.agent_id)
        write.put(_SESSION.dump_python(session, by_alias=True, exclude_none=True), keys.session_sk(session.id))
        last = {"session": session.id, "at": session.started_at, "harness": session.harness or ""}
        write.on_record(set_={"lastSession": last}, add={"unreadMentions": -mentions_seen} if mentions_seen else None)
        write.activity(entry).run(self._db)

    def mentions(self, agent_id: str, newest: int) -> list[dict[str, Any]]:
        """The newest `newest` mentions of the agent's handle (one Query page)."""
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": keys.agent_pk(agent_id), ":prefix": keys.MENTION_PREFIX}),
            "ScanIndexForward": False,
            "Limit": newest,
        }
        with translating_errors():
            return [from_item(item) for item in self._db.query(**request).get("Items", [])]

    def add_mention(self, agent_id: str, mention: dict[str, Any], expires_at: int) -> None:
        """A mention of the agent, counted unread on its record (its TTL keeps the partition from growing)."""
        write = AgentWrite(self._table, agent_id)
        write.put({**mention, keys.TTL_ATTRIBUTE: expires_at}, keys.mention_sk(mention["id"]))
        write.on_record(add={"unreadMentions": 1}).run(self._db)

    def share(self, account_id: str, agent_id: str) -> Share | None:
        item = get_item(self._db, self._table, keys.account_pk(account_id), keys.agent_share_sk(agent_id), False)
        return _SHARE.validate_python(item) if item else None

    def shares_with(self, account_id: str) -> list[Share]:
        """What other accounts shared with this one (at most the agents of the deployment's accounts)."""
        found = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.AGENT_SHARE_PREFIX)
        return [_SHARE.validate_python(item) for item in found]

    def shares_of(self, agent_id: str) -> list[Share]:
        """Who the owner shared the agent with: the copies kept in its own partition."""
        found = query_prefix(self._db, self._table, keys.agent_pk(agent_id), keys.AGENT_SHARE_PREFIX)
        return [_SHARE.validate_python(item) for item in found]

    def put_share(self, share: Share, entry: Activity, new: bool) -> None:
        """The share in the receiving account's partition and its copy in the agent's, with the activity entry;
        the receiving account must exist (rule "account"), and a new share must be new (rule "exists")."""
        values = _SHARE.dump_python(share, by_alias=True)
        write = AgentWrite(self._table, share.agent_id)
        receiving = keys.account_pk(share.account_id)
        write.check(keys.ACCOUNT_SK, EXISTS, "account", pk=receiving)
        write.put(values, keys.agent_share_sk(share.agent_id), "exists", NEW_ITEM if new else EXISTS, pk=receiving)
        write.put(values, keys.agent_share_sk(share.account_id))
        write.on_record(condition=Attr("accountId").eq(share.owner_account_id), rule="owner")
        write.activity(entry).run(self._db)

    def delete_share(self, share: Share, entry: Activity) -> None:
        write = AgentWrite(self._table, share.agent_id)
        write.delete(keys.agent_share_sk(share.agent_id), "missing", pk=keys.account_pk(share.account_id))
        write.delete(keys.agent_share_sk(share.account_id))
        write.activity(entry).run(self._db)

    def session(self, agent_id: str, session_id: str, consistent: bool = False) -> Session | None:
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.session_sk(session_id), consistent)
        return _SESSION.validate_python(item) if item else None

    def profiles(self, agent_id: str) -> list[Profile]:
        """At most one per harness and the default: one Query page."""
        found = query_prefix(self._db, self._table, keys.agent_pk(agent_id), keys.PROFILE_PREFIX)
        return [_PROFILE.validate_python(item) for item in found]

    def put_profile(self, profile: Profile, previous_revision: int, write: AgentWrite) -> None:
        """Created (`previous_revision` 0) or replaced if still at the revision read: rule "revision"; the prompt
        lock rides along (rule "locked")."""
        condition = NEW_ITEM if previous_revision == 0 else revision_is(previous_revision)
        values = _PROFILE.dump_python(profile, by_alias=True, exclude_none=True)
        write.unlocked().put(values, keys.profile_sk(profile.harness), "revision", condition)
        write.on_record(add={"profileTools": {profile.harness}}).run(self._db)

    def delete_profile(self, agent_id: str, harness: str, write: AgentWrite) -> None:
        """Rule "missing" when the agent has no profile for that harness."""
        write.unlocked().delete(keys.profile_sk(harness), "missing")
        write.on_record(delete={"profileTools": {harness}}).run(self._db)

    def activity(
        self, agent_id: str, kinds: tuple[str, ...] | None, limit: int, cursor: str | None
    ) -> tuple[list[Activity], str | None]:
        """Newest first; a kind filter reads at most `_ACTIVITY_READ` entries a call and hands a cursor on."""
        pk = keys.agent_pk(agent_id)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": pk, ":prefix": keys.AGENT_ACTIVITY_PREFIX}),
            "ScanIndexForward": False,
            "Limit": limit if kinds is None else _ACTIVITY_READ,
        }
        if kinds is not None:
            request["FilterExpression"] = "#kind IN (" + ", ".join(f":k{i}" for i in range(len(kinds))) + ")"
            request["ExpressionAttributeNames"] = {"#kind": "kind"}
            request["ExpressionAttributeValues"] |= to_item({f":k{i}": k for i, k in enumerate(kinds)})
        start = decode_cursor(cursor, {keys.PK: pk}, (keys.SK,), keys.AGENT_ACTIVITY_PREFIX)
        if start is not None:
            request["ExclusiveStartKey"] = start
        with translating_errors():
            page = self._db.query(**request)
        found = [_ACTIVITY.validate_python(from_item(item)) for item in page.get("Items", [])]
        if len(found) > limit:  # a filtered read matched more than a page: resume after the last one shown
            found = found[:limit]
            return found, cursor_after(key(pk, keys.agent_activity_sk(found[-1].id)))
        return found, encode_cursor(page.get("LastEvaluatedKey"))

    def record(self, agent_id: str, entry: Activity) -> None:
        """An activity entry on its own, for what a person does in the console (a share, a lock, a restore)."""
        AgentWrite(self._table, agent_id).activity(entry).run(self._db)

    def set_fields(self, agent_id: str, fields: dict[str, Any], entry: Activity) -> None:
        """Person-only switches on the record (the prompt lock, archiving), with their activity entry."""
        write = AgentWrite(self._table, agent_id).on_record(set_=fields)
        write.activity(entry).run(self._db)

    def change_slug(self, agent: Agent, old_slug: str, previous_revision: int) -> None:
        """The @handle moved (the person's decision): the new claim, the old one released, the record, at once."""
        write = AgentWrite(self._table, agent.id)
        account = keys.account_pk(agent.account_id)
        write.put(_slug_item(agent), keys.agent_slug_sk(agent.slug), "slug", NEW_ITEM, pk=account)
        write.delete(keys.agent_slug_sk(old_slug), "revision", Attr("agentId").eq(agent.id), pk=account)
        fields = {"slug": agent.slug, "revision": agent.revision, "updatedAt": agent.updated_at}
        write.on_record(set_=fields, condition=revision_is(previous_revision), rule="revision").run(self._db)

    def offer(self, offer: TransferOffer, agent: Agent, entry: Activity) -> None:
        """A transfer offered to another account (rule "account": it exists), replacing an earlier offer, while
        the agent is still the owner's and unchanged (rule "revision")."""
        write = AgentWrite(self._table, agent.id)
        receiving = keys.account_pk(offer.account_id)
        write.check(keys.ACCOUNT_SK, EXISTS, "account", pk=receiving)
        if agent.offered_to is not None and agent.offered_to != offer.account_id:
            write.delete(keys.agent_offer_sk(agent.id), condition=None, pk=keys.account_pk(agent.offered_to))
        write.put(_OFFER.dump_python(offer, by_alias=True), keys.agent_offer_sk(agent.id), pk=receiving)
        unchanged = revision_is(agent.revision) & Attr("accountId").eq(agent.account_id)
        fields = {"offeredTo": offer.account_id, "offeredAt": offer.offered_at}
        write.on_record(set_=fields, condition=unchanged, rule="revision").activity(entry).run(self._db)

    def end_offer(self, agent_id: str, account_id: str, entry: Activity) -> None:
        """The offer to `account_id` withdrawn or declined: rule "missing" when it is not the pending one."""
        write = AgentWrite(self._table, agent_id)
        write.delete(keys.agent_offer_sk(agent_id), condition=None, pk=keys.account_pk(account_id))
        write.on_record(remove=("offeredTo", "offeredAt"), condition=Attr("offeredTo").eq(account_id), rule="missing")
        write.activity(entry).run(self._db)

    def offers_to(self, account_id: str) -> list[TransferOffer]:
        """The transfers other accounts offer this one (at most one per agent of the deployment)."""
        found = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.AGENT_OFFER_PREFIX)
        return [_OFFER.validate_python(item) for item in found]

    def transfer(self, agent: Agent, to_account: str, most: int, now: str, entry: Activity) -> None:
        """The offered account takes the agent: the offer must still be pending to it and the agent unchanged
        (rule "revision"), its @handle free there (rule "slug"), room under its cap (rule "cap"). Every share
        and load session ends: shares are void once their owner no longer owns the agent (and are deleted after),
        sessions opened before `ownedSince` refuse writes."""
        shares = self.shares_of(agent.id)
        write = AgentWrite(self._table, agent.id)
        old, new = keys.account_pk(agent.account_id), keys.account_pk(to_account)
        write.delete(keys.agent_slug_sk(agent.slug), "revision", Attr("agentId").eq(agent.id), pk=old)
        claim = {"agentId": agent.id}
        write.put(claim, keys.agent_slug_sk(agent.slug), "slug", NEW_ITEM, pk=new)
        write.update(keys.ACCOUNT_SK, Update().add("agents", -1), pk=old)
        room = EXISTS & (Attr("agents").not_exists() | Attr("agents").lt(most))
        write.update(keys.ACCOUNT_SK, Update().add("agents", 1).only_if(room), "cap", pk=new)
        write.delete(keys.agent_offer_sk(agent.id), condition=None, pk=new)
        fields = {"accountId": to_account, "revision": agent.revision + 1, "ownedSince": now, "unreadMentions": 0}
        pending = revision_is(agent.revision) & Attr("offeredTo").eq(to_account)
        write.on_record(set_=fields, remove=("offeredTo", "offeredAt"), condition=pending, rule="revision")
        write.activity(entry).run(self._db)
        ended = [key(keys.account_pk(share.account_id), keys.agent_share_sk(agent.id)) for share in shares]
        ended += [key(keys.agent_pk(agent.id), keys.agent_share_sk(share.account_id)) for share in shares]
        batch_delete(self._db, self._table, ended, f"void shares of agent {agent.id} remain (they grant nothing)")

    def delete(self, agent: Agent) -> None:
        """The agent's claim, count and record at once (it is gone from then on), then the rest of its partition and
        the shares pointing at it, paged."""
        write = AgentWrite(self._table, agent.id)
        account = keys.account_pk(agent.account_id)
        write.delete(keys.agent_slug_sk(agent.slug), condition=Attr("agentId").eq(agent.id), pk=account)
        write.update(keys.ACCOUNT_SK, Update().add("agents", -1), pk=account)
        write.delete(keys.AGENT_SK, "revision", revision_is(agent.revision))
        shares = self.shares_of(agent.id)
        write.run(self._db)
        pk = keys.agent_pk(agent.id)
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": to_item({":pk": pk}),
            "ProjectionExpression": "PK, SK",
        }
        wanted = [key(pk, item[keys.SK]) for item in query_all(self._db, request)]
        wanted += [key(keys.account_pk(share.account_id), keys.agent_share_sk(agent.id)) for share in shares]
        if agent.offered_to is not None:
            wanted.append(key(keys.account_pk(agent.offered_to), keys.agent_offer_sk(agent.id)))
        batch_delete(self._db, self._table, wanted, f"parts of agent {agent.id} remain; delete it again")

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
    values = _AGENT.dump_python(agent, by_alias=True, exclude_none=True)
    if not agent.profile_tools:
        del values["profileTools"]  # DynamoDB stores no empty set
    return {keys.PK: keys.agent_pk(agent.id), keys.SK: keys.AGENT_SK, **values}


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
