"""One write to an agent's partition as one transaction, every item labelled with the rule its condition
keeps, so a refusal says which rule refused it (decision 0009).

An agent's write carries its own checks: the load session (exists, not idle), the connection's rate
counter, the owner's prompt lock, a cap on the record. They ride in the write's transaction rather than
in reads before it, so a check and the write it guards cannot be separated by a racing writer.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase
from pydantic import TypeAdapter

from agent_workspace.domain.agent_records import Activity
from agent_workspace.domain.errors import Conflict, Unavailable
from agent_workspace.store import keys
from agent_workspace.store.dynamo import key, to_item, translating_errors
from agent_workspace.store.expressions import EXISTS, Update, only_if

_ACTIVITY: TypeAdapter[Activity] = TypeAdapter(Activity)
_CONFLICT_ROUNDS = 4  # a transaction that only collided with another (TransactionConflict) is tried again


class Refused(Exception):
    """A condition of the write failed: `rule` is the label of the item whose condition it was."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


class AgentWrite:
    """A transaction being built; `run` writes it or raises `Refused` with the first failing rule."""

    def __init__(self, table: str, agent_id: str) -> None:
        self._table = table
        self._pk = keys.agent_pk(agent_id)
        self._items: list[dict[str, Any]] = []
        self._rules: list[str] = []
        # The agent's record takes one operation per transaction (DynamoDB's rule), so what each part of the
        # write changes or checks on it is gathered here and sent as one Update (or ConditionCheck).
        self._record = Update()
        self._record_changes = 0
        self._record_condition: ConditionBase | None = None
        self._record_rules: list[str] = []

    def put(
        self,
        values: dict[str, Any],
        sk: str,
        rule: str = "",
        condition: ConditionBase | None = None,
        pk: str | None = None,
    ) -> "AgentWrite":
        item = {**values, keys.PK: pk or self._pk, keys.SK: sk}
        put: dict[str, Any] = {"TableName": self._table, "Item": to_item(item)}
        return self._add({"Put": put | (only_if(condition) if condition is not None else {})}, rule)

    def update(self, sk: str, update: Update, rule: str = "", pk: str | None = None) -> "AgentWrite":
        return self._add(
            {"Update": {"TableName": self._table, "Key": key(pk or self._pk, sk), **update.params()}}, rule
        )

    def delete(
        self, sk: str, rule: str = "", condition: ConditionBase | None = EXISTS, pk: str | None = None
    ) -> "AgentWrite":
        delete = {"TableName": self._table, "Key": key(pk or self._pk, sk)}
        delete |= only_if(condition) if condition is not None else {}
        return self._add({"Delete": delete}, rule)

    def check(self, sk: str, condition: ConditionBase, rule: str, pk: str | None = None) -> "AgentWrite":
        check = {"TableName": self._table, "Key": key(pk or self._pk, sk), **only_if(condition)}
        return self._add({"ConditionCheck": check}, rule)

    def unlocked(self) -> "AgentWrite":
        """The owner has not locked the prompt (profiles and briefs follow the prompt's lock)."""
        return self.on_record(condition=Attr("promptLocked").ne(True), rule="locked")

    def on_record(
        self,
        add: dict[str, Any] | None = None,
        set_: dict[str, Any] | None = None,
        delete: dict[str, set[str]] | None = None,
        condition: ConditionBase | None = None,
        rule: str = "",
        remove: tuple[str, ...] = (),
    ) -> "AgentWrite":
        """Changes to the agent's record, and a condition on it that `rule` names; the record must exist."""
        for name in remove:
            self._record.remove(name)
        for name, value in (add or {}).items():
            self._record.add(name, value)
        for name, value in (set_ or {}).items():
            self._record.set(name, value)
        for name, elements in (delete or {}).items():
            self._record.delete(name, elements)
        self._record_changes += len(add or {}) + len(set_ or {}) + len(delete or {}) + len(remove)
        if condition is not None:
            self._record_condition = condition if self._record_condition is None else self._record_condition & condition
            self._record_rules.append(rule)
        return self

    def in_session(
        self,
        session_id: str,
        token_id: str,
        now: str,
        idle_since: str,
        opened_after: str | None = None,
        owner: str | None = None,
    ) -> "AgentWrite":
        """The session exists for this agent, was opened by this connection (`token_id`), after the agent's last
        transfer (`opened_after`: a transfer ends every session), and wrote or loaded after `idle_since`; it is
        now active. With `owner`, the agent is still that account's (a transfer after the read refuses it, on the
        record: rule "session", or "record" when another rule rides there too)."""
        if owner is not None:
            self.on_record(condition=Attr("accountId").eq(owner), rule="session")
        opened_here = EXISTS & Attr("tokenId").eq(token_id)
        if opened_after is not None:
            opened_here = opened_here & Attr("startedAt").gte(opened_after)
        update = (
            Update()
            .set("lastActiveAt", now)
            .add("writes", 1)
            .only_if(opened_here & Attr("lastActiveAt").gte(idle_since))
        )
        return self.update(keys.session_sk(session_id), update, "session")

    def counted(self, sk: str, most: int, expires_at: int, rule: str = "rate") -> "AgentWrite":
        """One more write in a rate window, refused at `most` (rule `rule`); the counter expires with the window."""
        update = (
            Update()
            .add("n", 1)
            .set(keys.TTL_ATTRIBUTE, expires_at)
            .only_if(Attr("n").not_exists() | Attr("n").lt(most))
        )
        return self.update(sk, update, rule)

    def activity(self, entry: Activity) -> "AgentWrite":
        values = _ACTIVITY.dump_python(entry, by_alias=True, exclude_none=True)
        return self.put(values, keys.agent_activity_sk(entry.id))

    def run(self, db: Any) -> None:
        """Written, or `Refused`: a failed condition on the record names its one rule, or "record" when several
        rode on it (the caller reads the record to tell which)."""
        if self._record_changes or self._record_condition is not None:
            condition = EXISTS if self._record_condition is None else EXISTS & self._record_condition
            rule = (
                self._record_rules[0]
                if len(self._record_rules) == 1
                else ("record" if self._record_rules else "missing")
            )
            if self._record_changes:
                self.update(keys.AGENT_SK, self._record.only_if(condition), rule)
            else:
                self.check(keys.AGENT_SK, condition, rule)
            self._record_changes, self._record_condition = 0, None
        for _ in range(_CONFLICT_ROUNDS):
            try:
                with translating_errors():
                    db.transact_write_items(TransactItems=self._items)
                return
            except Conflict as conflict:
                failed = [
                    rule
                    for rule, reason in zip(self._rules, conflict.reasons, strict=False)
                    if reason == "ConditionalCheckFailed"
                ]
                if failed:
                    raise Refused(failed[0] or "changed") from None
                if "TransactionConflict" not in conflict.reasons:
                    raise
        raise Unavailable("the agent is being written by others at this moment; retry shortly")

    def _add(self, item: dict[str, Any], rule: str) -> "AgentWrite":
        self._items.append(item)
        self._rules.append(rule)
        return self
