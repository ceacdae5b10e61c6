"""Tasks, their messages and attachment records, in the workspace's partition.

A task is `WS#<wid> / TASK#<tid>`; its messages and attachments sort right after it
(`TASK#<tid>#ATT#…`, `TASK#<tid>#MSG#…`), so one Query reads a task with its conversation.
GSI1 is the agent's queue, GSI2 the human's listing by status; see docs/data-model.md.
"""

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase, ConditionExpressionBuilder
from pydantic import TypeAdapter

from agent_workspace.backoff import back_off
from agent_workspace.domain.columns import DEFAULT_COLUMN
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError, Unavailable
from agent_workspace.domain.tasks import TASK_ITEM_BYTES_MAX, AttachmentRef, Entry, Link, Message, Task, TaskFilter
from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after, decode_cursor, encode_cursor
from agent_workspace.store.dynamo import (
    batch_delete,
    batch_get,
    from_item,
    get_item,
    key,
    query_all,
    to_item,
    translating_errors,
)
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if, status_is

_CONTENTION_ROUNDS = 6  # bounded retries when another writer touched the same items meanwhile
_QUEUE_PAGE = 10  # the first read of the queue; deeper pages when other agents took these
_QUEUE_PAGE_MAX = 100
_QUEUE_READS = 4  # Query pages one read of one queue takes at most: held tasks are skipped, never without bound
_CONTENDED_TRIES = 2  # random claims per page once the oldest was lost
_FILTERED_READS = 500  # tasks one filtered listing call evaluates at most


class TaskStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    # -- writes --------------------------------------------------------------------------------

    def create(self, account_id: str, task: Task, also: tuple[dict[str, Any], ...] = ()) -> None:
        """The task, its attachment records and the workspace's count, in one transaction, with `also` last.

        A cancelled transaction's reasons come in that order: task, attachments, count, `also`.
        """
        item = task_item(task)
        items: list[dict[str, Any]] = [
            {"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}},
            *(self._attachment_put(task.workspace_id, task.id, ref) for ref in task.attachments),
            self._count_update(account_id, task.workspace_id, {task.status: 1}),
            *also,
        ]
        items.extend(self._identified(task))
        self._transact(items, f"task {task.id} already exists")

    def _identified(self, task: Task) -> list[dict[str, Any]]:
        """The transaction items that come with a new task: its identifier's pointer and its "created" entry."""
        created = Entry(task.id, task.created_at, task.history[0]["by"], "created", task.history[0].get("tokenId"))
        items = [self.entry_put(task.workspace_id, task.id, replace(created, details={"column": task.board_column}))]
        if task.number is not None:
            pointer = {keys.PK: keys.workspace_pk(task.workspace_id), keys.SK: keys.identifier_sk(task.number)}
            pointer["taskId"] = task.id
            items.append({"Put": {"TableName": self._table, "Item": to_item(pointer), **only_if(NEW_ITEM)}})
        return items

    def next_number(self, account_id: str, workspace_id: str) -> int:
        """The workspace's next short-identifier number: one atomic counter, so no two tasks share one (a failed
        create leaves a gap, never a duplicate)."""
        with translating_errors():
            response = self._db.update_item(
                TableName=self._table,
                Key=key(keys.account_pk(account_id), keys.workspace_sk(workspace_id)),
                **Update().add("taskNumbers", 1).only_if(EXISTS).params(),
                ReturnValues="UPDATED_NEW",
            )
        return int(response["Attributes"]["taskNumbers"]["N"])

    def task_id_of(self, workspace_id: str, number: int) -> str | None:
        """The task a short identifier names, if any."""
        item = get_item(self._db, self._table, keys.workspace_pk(workspace_id), keys.identifier_sk(number), False)
        return item["taskId"] if item else None

    def add_message(self, account_id: str, workspace_id: str, task_id: str, message: Message) -> None:
        """The message and its attachment records; refused if the task does not exist."""
        items: list[dict[str, Any]] = [
            touch_task(self._table, workspace_id, task_id, message.created_at),
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(message_item(workspace_id, task_id, message)),
                    **only_if(NEW_ITEM),
                }
            },
            *(self._attachment_put(workspace_id, task_id, ref) for ref in message.attachments),
        ]
        try:
            self._transact(items, "")
        except Conflict:
            # Attachment ids are unique per task; otherwise the task is what is missing.
            if self.get(workspace_id, task_id) is None:
                raise NotFound(f"no task {task_id} in this workspace") from None
            raise Conflict("an attachment id in this message is already used in the task; pick another id") from None

    def set_status(
        self,
        account_id: str,
        workspace_id: str,
        task_id: str,
        status: str,
        by: dict[str, str],
        now: str,
        publication: Callable[[Task], tuple[str, dict[str, Any]]] | None = None,
        column: str | None = None,
        edit: Callable[[Task], Task] | None = None,
        entries: tuple[Entry, ...] = (),
        check: Callable[[Task], None] | None = None,
        comments: Callable[[Task], tuple[Entry, ...]] | None = None,
    ) -> tuple[Task, Task, list[Task]]:
        """Move a task to `status`, keep the change in its history and the counts in step; returns the task as
        changed, as it was read before the change (its old status and column), and the tasks it unblocked.

        Conditional on the status read just before, so two concurrent changes never both apply to the
        same old status; the loser re-reads and applies on top, never overwriting silently. Completing
        a task with an `eventId` for the first time also writes `publication(task)` (its id and a
        transaction item recording it) in the same transaction, so the event is published exactly once.
        `notstarted` on a task that is dequeued but not started (still `notstarted`) releases the claim instead.
        The task lands in `column` (of that status), else the status's default column; landing in `done` takes
        it off the waiting lists of the tasks it blocks, in the same transaction (the third value: those that
        wait on nothing more). `edit` applies the board's other changes to each fresh read (and refuses, raising,
        a change that no longer applies to it); `entries` go on the activity feed with the change. `check` refuses,
        raising, before anything applies to the fresh read, a change to the same status too; the write is then
        conditional on the claim read, so a claim taken meanwhile is checked again. `comments(read)` are the comments
        posted with the change (made from each fresh read: a blocker's questions, say), counted on the task by
        `ADD commentCount` in the same transaction.
        """
        for attempt in range(_CONTENTION_ROUNDS):
            current = self.get(workspace_id, task_id, consistent=True)
            if current is None:
                raise NotFound(f"no task {task_id} in this workspace")
            if check is not None:
                check(current)
            if current.status == status and edit is not None:
                edit(current)  # the board's change refuses, saying why: it cannot apply to the task as it is
                raise Conflict(f"task {task_id} is {current.board_column} already")
            if current.status == status:
                if current.claim and current.queued:
                    # `notstarted` on a dequeued task the agent never started: it gives the task back.
                    released = self._release_claim(workspace_id, current, now)
                    if released is None:  # claimed anew meanwhile: read it again
                        back_off(attempt)
                        continue
                    return released, current, []
                return current, current, []  # not a change: nothing to record
            # Never before the change it follows: this attempt may have lost to a later one, and another
            # instance's clock may run a little ahead of ours; the history stays in order either way.
            at = max(now, current.history[-1]["at"]) if current.history else now
            entry = {"status": status, "at": at, **by}
            landing = column or DEFAULT_COLUMN[status]
            edited = edit(current) if edit else current
            update = _status_change(Update(), current, status, entry, landing).only_if(_unchanged_since_read(current))
            if check is not None:
                update.only_if(_claim_as_read(current))
            publication_id = None
            if publication and status == "completed" and current.event_id and not current.event_publication_id:
                publication_id, publication_put = publication(current)
                update.set("eventPublicationId", publication_id).only_if(_NOT_YET_PUBLISHED)
            moved = replace(edited, status=status, column=landing)
            if moved.queued:
                moved = replace(moved, claim=None)
                update.set(keys.GSI1_PK, keys.queue_pk(workspace_id, moved.assigned_token))
                update.set(keys.GSI1_SK, keys.queue_sk(current.created_at, task_id, moved.queue_rank))
            else:
                update.remove(keys.GSI1_PK).remove(keys.GSI1_SK)
            _edits(update, current, moved, status)
            posted = comments(current) if comments else ()
            if posted:
                update.add("commentCount", len(posted))  # ADD: a comment posted meanwhile is counted too
                moved = replace(moved, comment_count=current.comment_count + len(posted))
            items: list[dict[str, Any]] = [
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": key(keys.workspace_pk(workspace_id), keys.task_sk(task_id)),
                        **update.params(),
                    }
                }
            ]
            items.append(self._count_update(account_id, workspace_id, {current.status: -1, status: 1}))
            if publication_id:
                items.append(publication_put)
            history, changes = current.changed_to(entry)
            # The item as this change leaves it: refused by name past the budget.
            check_task_size(replace(moved, updated_at=at, history=history, status_changes=changes))
            unblocked = self.unblocking(current, moved, at)
            items.extend(self.put_if_unchanged(before, after) for before, after in unblocked)
            items.extend(self.entry_put(workspace_id, task_id, e) for e in entries)
            items.extend(self.entry_put(workspace_id, task_id, c, comment=True) for c in posted)
            try:
                self._transact(items, "")
            except Conflict:
                back_off(attempt)
                continue
            changed = replace(
                moved,
                updated_at=at,
                history=history,
                status_changes=changes,
                questions=() if status != "blocked" else moved.questions,
                event_publication_id=publication_id or current.event_publication_id,
            )
            return changed, current, [after for _, after in unblocked if not after.waiting_on]
        raise Unavailable(f"task {task_id} is being changed by others; retry shortly")

    def _release_claim(self, workspace_id: str, current: Task, now: str) -> Task | None:
        """Give a dequeued, unstarted task back: off its lease and at its own place in the queue again, so the
        next dequeue (by any agent) gets it. None if the claim is no longer the one read (lost a race)."""
        assert current.claim is not None
        at = max(now, current.updated_at)
        release = (
            Update()
            .set(keys.GSI1_PK, keys.queue_pk(workspace_id, current.assigned_token))
            .set(keys.GSI1_SK, keys.queue_sk(current.created_at, current.id, current.queue_rank))
            .set("updatedAt", at)
            .remove("claim")
            # Still unstarted and held by the claim read just before, not one taken over since.
            .only_if(status_is("notstarted") & _held_by(current.claim["tokenId"], current.claim["claimedAt"]))
        )
        try:
            with translating_errors():
                self._db.update_item(
                    TableName=self._table,
                    Key=key(keys.workspace_pk(workspace_id), keys.task_sk(current.id)),
                    **release.params(),
                )
        except Conflict:
            return None
        return replace(current, claim=None, updated_at=at)

    def unblocking(self, before: Task, after: Task, at: str) -> list[tuple[Task, Task]]:
        """The tasks `after` blocks, as read and without it on their waiting lists, when it lands in `done`."""
        if after.board_column != "done" or before.board_column == "done":
            return []
        blocked = [link.task_id for link in after.links if link.type == "blocks"]
        wanted = [key(keys.workspace_pk(after.workspace_id), keys.task_sk(t)) for t in blocked]
        found = [task_from(from_item(item)) for item in batch_get(self._db, self._table, wanted)] if wanted else []
        return [
            (task, replace(task, waiting_on=tuple(w for w in task.waiting_on if w != after.id), updated_at=at))
            for task in found
            if after.id in task.waiting_on
        ]

    def put_if_unchanged(self, before: Task, after: Task) -> dict[str, Any]:
        """A transaction item writing `after` over the task, if it is still as `before` was read."""
        return {"Put": {"TableName": self._table, "Item": to_item(task_item(after)), **only_if(_unchanged(before))}}

    def save(
        self,
        account_id: str,
        before: Task,
        after: Task,
        entries: tuple[Entry, ...] = (),
        also: tuple[dict[str, Any], ...] = (),
    ) -> list[Task]:
        """A board edit without a status change: `after` over the task as read (`before`), its activity entries
        and `also`, in one transaction; `Conflict` if anyone changed the task meanwhile. Landing in `done` takes
        it off the waiting lists of the tasks it blocks, in the same transaction: returned are those that wait
        on nothing more."""
        assert before.status == after.status, "a status change goes through set_status"
        unblocked = self.unblocking(before, after, after.updated_at)
        items = [self.put_if_unchanged(before, after)]
        items.extend(self.put_if_unchanged(was, now) for was, now in unblocked)
        items.extend(self.entry_put(after.workspace_id, after.id, entry) for entry in entries)
        items.extend(also)
        self._transact(items, f"task {after.id} changed meanwhile; read it again")
        return [now for _, now in unblocked if not now.waiting_on]

    def entry_put(self, workspace_id: str, task_id: str, entry: Entry, comment: bool = False) -> dict[str, Any]:
        """A transaction item adding an activity entry (or, with `comment`, a comment) to a task."""
        sk = keys.comment_sk(task_id, entry.id) if comment else keys.activity_sk(task_id, entry.id)
        values = _ENTRY.dump_python(entry, by_alias=True, exclude_none=True)
        item = {keys.PK: keys.workspace_pk(workspace_id), keys.SK: sk, **values}
        return {"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}}

    def add_comment(self, workspace_id: str, task_id: str, entry: Entry) -> None:
        """A comment, counted on the task in the same transaction; refused if the task does not exist."""
        items = [
            touch_task(self._table, workspace_id, task_id, entry.at, comments=1),
            self.entry_put(workspace_id, task_id, entry, True),
        ]
        try:
            self._transact(items, "")
        except Conflict:
            raise NotFound(f"no task {task_id} in this workspace") from None

    def feed(self, workspace_id: str, task_id: str, limit: int, comments: bool = False) -> list[Entry]:
        """A task's newest activity entries (or comments), newest first: one Query."""
        prefix = keys.comment_sk(task_id, "") if comments else keys.activity_sk(task_id, "")
        with translating_errors():
            page = self._db.query(
                TableName=self._table,
                KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
                ExpressionAttributeValues=to_item({":pk": keys.workspace_pk(workspace_id), ":prefix": prefix}),
                ScanIndexForward=False,
                Limit=limit,
            )
        return [_ENTRY.validate_python(from_item(item)) for item in page.get("Items", [])]

    def claim_next(self, workspace_id: str, token_id: str, now: str, lease_until: str) -> Task | None:
        """Hand the oldest available queued task to exactly one caller.

        Reads one bounded page of the queue index (available items sort first, whatever the backlog)
        and claims with a write conditional on the item still being where the page saw it, so two
        agents never get the same task. A claim moves the task's queue position to its lease expiry:
        if the agent never starts it, it becomes available again then.

        Losing the oldest means others are dequeuing too: instead of all chasing the same items in
        order, each loser tries a few random ones further down, and re-reads a page twice as deep,
        so a crowd of agents spreads over the queue within a few rounds and refused writes stay few.
        """
        for attempt in range(_CONTENTION_ROUNDS):
            candidates = self.available(workspace_id, token_id, now, min(_QUEUE_PAGE << attempt, _QUEUE_PAGE_MAX))
            if not candidates:
                return None
            if attempt == 0:
                first, candidates = candidates[0], candidates[1:]
                claimed = self._try_claim(workspace_id, first, token_id, now, lease_until)
                if claimed is not None:
                    return claimed
            for candidate in random.sample(candidates, min(_CONTENDED_TRIES, len(candidates))):
                claimed = self._try_claim(workspace_id, candidate, token_id, now, lease_until)
                if claimed is not None:
                    return claimed
            back_off(attempt)
        raise Unavailable("the queue is busy with other agents; retry shortly")

    def available(
        self, workspace_id: str, token_id: str, now: str, limit: int, project_id: str | None = None
    ) -> list[dict[str, Any]]:
        """The first queued tasks this token may take now, in queue order (`domain.columns.queue_rank`).

        Its own queue (the tasks the human named for it, which rank first) and, when that holds none it may take
        now, the open queue: one Query page each in the usual case, never a task named for another token. Read
        past are tasks held under a lease that has not run out, and in the open queue tasks named for another
        token before named queues existed (the filter `mine`; a task moves to its token's queue on its next
        write): at most `_QUEUE_READS` pages of each queue, then `Unavailable` rather than a false "empty".
        With `project_id`, only that project's tasks are kept, and the others are read past the same way.
        """
        free = Attr("claim").not_exists() | Attr("claim.leaseExpiresAt").lte(now)
        if project_id is not None:
            free = free & Attr("projectId").eq(project_id)
        own, own_cut = self._queue_page(keys.queue_pk(workspace_id, token_id), free, limit)
        if own:
            return own
        found, cut = self._queue_page(keys.queue_pk(workspace_id), free & _takeable_by(token_id), limit)
        if not found and (cut or own_cut):
            if project_id is not None:
                raise Unavailable(
                    f"the first tasks of the queue are held by other agents' claims or belong to other projects "
                    f"than {project_id}: narrowed to one project, the queue is read {_QUEUE_READS} pages deep; "
                    "retry shortly, or ask without projectId"
                )
            raise Unavailable("the first tasks of the queue are all held by claims of other agents; retry shortly")
        return found

    def _queue_page(self, partition: str, keep: ConditionBase, limit: int) -> tuple[list[dict[str, Any]], bool]:
        """Up to `limit` items of one queue (GSI1 partition) that `keep` keeps, in order; and whether the reads
        stopped at their cap with more of the queue unread."""
        built = ConditionExpressionBuilder().build_expression(keep)
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": keys.GSI1,
            "KeyConditionExpression": "GSI1PK = :q",
            "FilterExpression": built.condition_expression,
            "ExpressionAttributeNames": built.attribute_name_placeholders,
            "ExpressionAttributeValues": to_item({":q": partition, **built.attribute_value_placeholders}),
            # DynamoDB's Limit counts items read before the filter: never page one item at a time.
            "Limit": max(limit, _QUEUE_PAGE),
        }
        with translating_errors():
            for _ in range(_QUEUE_READS):
                page = self._db.query(**request)
                found = [from_item(item) for item in page.get("Items", [])]
                if found or "LastEvaluatedKey" not in page:
                    return found[:limit], False
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
                request["Limit"] = _QUEUE_PAGE_MAX
        return [], True

    def peek_next(self, workspace_id: str, token_id: str, now: str, project_id: str | None = None) -> Task | None:
        """The task a dequeue by this token would take now, without taking it; the first of one project's, with
        `project_id`."""
        found = self.available(workspace_id, token_id, now, 1, project_id)
        return task_from(found[0]) if found else None

    def _try_claim(
        self, workspace_id: str, seen: dict[str, Any], token_id: str, now: str, lease_until: str
    ) -> Task | None:
        lease = keys.queue_sk(lease_until, seen["id"], keys.queue_rank_of(seen[keys.GSI1_SK]))
        claim = (
            Update()
            .set("claim", {"tokenId": token_id, "claimedAt": now, "leaseExpiresAt": lease_until})
            # In its token's queue from now on, if it was named before named queues existed.
            .set(keys.GSI1_PK, keys.queue_pk(workspace_id, seen.get("assignedToken")))
            .set(keys.GSI1_SK, lease)
            # Still queued exactly where the page saw it: nobody claimed or moved it meanwhile.
            # Or already claimed by this very request: a claim DynamoDB applied but answered
            # with a 5xx is resent by botocore, and must not read as lost.
            .only_if(_queued_at(seen[keys.GSI1_SK]) | (_queued_at(lease) & _held_by(token_id, now)))
            # Never a task named for another token, even one the human renamed since the page was read.
            .only_if(_takeable_by(token_id))
        )
        try:
            with translating_errors():
                response = self._db.update_item(
                    TableName=self._table,
                    Key=key(keys.workspace_pk(workspace_id), seen["SK"]),
                    **claim.params(),
                    ReturnValues="ALL_NEW",
                )
        except Conflict:
            return None
        return task_from(from_item(response["Attributes"]))

    def create_run(
        self, account_id: str, template: Task, run: Task, next_fire_at: str | None, finished: dict[str, str] | None
    ) -> None:
        """One firing of a cron template, all or nothing: the run, its link, the template moved on, the counts.

        Conditional on the template still waiting for this fire time and on the run's link not existing
        yet, so a retried or duplicated invocation creates no second run. `next_fire_at` None finishes a
        one-time template: it is set completed (`finished` being that history entry).
        """
        assert run.fire_at is not None
        link = {
            keys.PK: keys.workspace_pk(template.workspace_id),
            keys.SK: keys.run_sk(template.id, run.fire_at),
            "runId": run.id,
            "fireAt": run.fire_at,
        }
        moved_on = Update().set("lastFireAt", run.fire_at).add("runCount", 1).only_if(_due_at(run.fire_at))
        if next_fire_at is not None:
            moved_on.set("nextFireAt", next_fire_at)
        else:
            moved_on.remove("nextFireAt")
        deltas = {run.status: 1}
        if finished is not None and template.status != "completed":
            _status_change(moved_on, template, "completed", finished, DEFAULT_COLUMN["completed"])
            deltas[template.status] = deltas.get(template.status, 0) - 1
            deltas["completed"] = deltas.get("completed", 0) + 1
        items: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(task_item(run)),
                    **only_if(NEW_ITEM),
                }
            },
            {"Put": {"TableName": self._table, "Item": to_item(link), **only_if(NEW_ITEM)}},
            {
                "Update": {
                    "TableName": self._table,
                    "Key": key(keys.workspace_pk(template.workspace_id), keys.task_sk(template.id)),
                    **moved_on.params(),
                }
            },
            *(self._attachment_put(run.workspace_id, run.id, ref) for ref in run.attachments),
            self._count_update(account_id, template.workspace_id, {k: v for k, v in deltas.items() if v}),
            *self._identified(run),
        ]
        self._transact(items, f"template {template.id} already fired for {run.fire_at}")

    def delete_template(self, account_id: str, template: Task) -> None:
        """Delete a cron template (as read, status unchanged since) with its attachment records and run links.

        The runs themselves stay: they are tasks of their own.
        """
        workspace_id, template_id = template.workspace_id, template.id
        delete = {
            "Delete": {
                "TableName": self._table,
                "Key": key(keys.workspace_pk(workspace_id), keys.task_sk(template_id)),
                **only_if(status_is(template.status)),
            }
        }
        self._transact(
            [delete, self._count_update(account_id, workspace_id, {template.status: -1})],
            f"task {template_id} changed meanwhile; retry",
        )

    def purge_template_items(self, template: Task) -> None:
        """A deleted template's run links, attachment records and messages, unreachable now: in pages."""
        workspace_id, template_id = template.workspace_id, template.id
        leftovers = query_all(
            self._db,
            {
                "TableName": self._table,
                "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
                "ExpressionAttributeValues": to_item(
                    {":pk": keys.workspace_pk(workspace_id), ":prefix": keys.task_sk(template_id) + "#"}
                ),
                "ProjectionExpression": "PK, SK",
            },
        )
        doomed = [key(k[keys.PK], k[keys.SK]) for k in leftovers]
        batch_delete(self._db, self._table, doomed, f"template {template_id} is gone; its run links remain")

    def list_runs(
        self, workspace_id: str, template_id: str, limit: int, cursor: str | None
    ) -> tuple[list[Task], str | None]:
        """A template's runs, newest first: a page of its run links, then the runs in one BatchGetItem."""
        pk = keys.workspace_pk(workspace_id)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": pk, ":prefix": keys.run_prefix(template_id)}),
            "ScanIndexForward": False,
            "Limit": limit,
        }
        start = decode_cursor(cursor, {keys.PK: pk}, (keys.SK,))
        if start is not None:
            if not start[keys.SK]["S"].startswith(keys.run_prefix(template_id)):
                raise PayloadError("cursor is not one this listing returned", field="cursor")
            request["ExclusiveStartKey"] = start
        with translating_errors():
            page = self._db.query(**request)
        run_ids = [from_item(item)["runId"] for item in page.get("Items", [])]
        last = page.get("LastEvaluatedKey")
        next_cursor = encode_cursor({keys.PK: last[keys.PK], keys.SK: last[keys.SK]}) if last else None
        found = {task.id: task for task in self._get_many(workspace_id, run_ids)}
        return [found[run_id] for run_id in run_ids if run_id in found], next_cursor

    def run_cursor(self, workspace_id: str, template_id: str, run: Task) -> str:
        """The cursor of `list_runs` that resumes right after this run."""
        assert run.fire_at is not None
        return _cursor_at(workspace_id, keys.run_sk(template_id, run.fire_at))

    def relations(self, workspace_id: str, task_ids: list[str]) -> dict[str, tuple[tuple[Link, ...], str | None]]:
        """Each existing task's links and parent, nothing else read: one BatchGetItem per 100, for walking the
        board's graph (a link that would close a cycle)."""
        wanted = [key(keys.workspace_pk(workspace_id), keys.task_sk(t)) for t in task_ids]
        projection = {"ProjectionExpression": "#id, #links, #parent", "ExpressionAttributeNames": _RELATIONS}
        found: dict[str, tuple[tuple[Link, ...], str | None]] = {}
        for item in batch_get(self._db, self._table, wanted, consistent=False, projection=projection):
            values = from_item(item)
            links = tuple(Link(link["type"], link["taskId"]) for link in values.get("links", ()))
            found[values["id"]] = (links, values.get("parentId"))
        return found

    def _get_many(self, workspace_id: str, task_ids: list[str]) -> list[Task]:
        wanted = [key(keys.workspace_pk(workspace_id), keys.task_sk(t)) for t in task_ids]
        return [task_from(from_item(item)) for item in batch_get(self._db, self._table, wanted, consistent=False)]

    # -- reads ---------------------------------------------------------------------------------

    def get(self, workspace_id: str, task_id: str, consistent: bool = False) -> Task | None:
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table,
                Key=key(keys.workspace_pk(workspace_id), keys.task_sk(task_id)),
                ConsistentRead=consistent,
            ).get("Item")
        return task_from(from_item(item)) if item else None

    def get_with_conversation(
        self, workspace_id: str, task_id: str, limit: int, cursor: str | None
    ) -> tuple[Task, list[Message], str | None]:
        """The task and a page of its messages, oldest first: one Query for the first page."""
        pk = keys.workspace_pk(workspace_id)
        start = decode_cursor(cursor, {keys.PK: pk}, (keys.SK,))
        if start is not None and not start[keys.SK]["S"].startswith(keys.message_sk(task_id, "")):
            raise PayloadError("cursor is not one this task's conversation returned", field="cursor")
        task = None if start is None else self.get(workspace_id, task_id)
        # The task, its attachment records and its messages; not its runs, activity or comments (sorted after).
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND SK BETWEEN :task AND :last",
            "ExpressionAttributeValues": to_item(
                {":pk": pk, ":task": keys.task_sk(task_id), ":last": keys.message_sk(task_id, "~")}
            ),
        }
        if start is not None:
            request["ExclusiveStartKey"] = start
        messages: list[Message] = []
        with translating_errors():
            while True:
                page = self._db.query(**request)
                for raw in page.get("Items", []):
                    values = from_item(raw)
                    sk = values[keys.SK]
                    if sk == keys.task_sk(task_id):
                        task = task_from(values)
                    elif sk.startswith((keys.attachment_prefix(task_id), keys.run_prefix(task_id))):
                        continue  # attachment records (the task and messages carry copies) and a template's runs
                    elif len(messages) < limit:
                        messages.append(_message(values))
                    else:
                        after_last = self.conversation_cursor(workspace_id, task_id, messages[-1])
                        return _found(task, task_id), messages, after_last
                if "LastEvaluatedKey" not in page:
                    return _found(task, task_id), messages, None
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def conversation_cursor(self, workspace_id: str, task_id: str, message: Message) -> str:
        """The cursor of `get_with_conversation` that resumes right after this message."""
        return _cursor_at(workspace_id, keys.message_sk(task_id, message.id))

    def get_message(self, workspace_id: str, task_id: str, message_id: str) -> Message | None:
        pk, sk = keys.workspace_pk(workspace_id), keys.message_sk(task_id, message_id)
        item = get_item(self._db, self._table, pk, sk, consistent=False)
        return _message(item) if item else None

    def get_attachment(self, workspace_id: str, task_id: str, attachment_id: str) -> AttachmentRef | None:
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table,
                Key=key(keys.workspace_pk(workspace_id), keys.attachment_sk(task_id, attachment_id)),
            ).get("Item")
        return attachment_ref(from_item(item)) if item else None

    def list_page(
        self, workspace_id: str, status: str | None, assignee: str | None, limit: int, cursor: str | None
    ) -> tuple[list[Task], str | None]:
        """A page of the workspace's tasks, by status then creation time (GSI2)."""
        pk = keys.task_list_pk(workspace_id)
        condition, values = keys.listing_condition(pk, status)
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": keys.GSI2,
            "KeyConditionExpression": condition,
            "Limit": limit,
        }
        if assignee:
            request["FilterExpression"] = "assignee = :assignee"
            values[":assignee"] = assignee
        request["ExpressionAttributeValues"] = to_item(values)
        start = decode_cursor(cursor, {keys.GSI2_PK: pk}, _LIST_KEYS, keys.listing_prefix(status), keys.GSI2_SK)
        if start is not None:
            request["ExclusiveStartKey"] = start
        tasks: list[Task] = []
        with translating_errors():
            while True:
                page = self._db.query(**request)
                tasks.extend(task_from(from_item(item)) for item in page.get("Items", []))
                if len(tasks) >= limit:
                    # A filtered page may hold more than asked: resume right after the last one returned.
                    return tasks[:limit], self.listing_cursor(tasks[limit - 1])
                if "LastEvaluatedKey" not in page:
                    return tasks, None
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def list_filtered(
        self,
        workspace_id: str,
        status: str | None,
        keep: TaskFilter,
        limit: int,
        cursor: str | None,
        reads: int = _FILTERED_READS,
    ) -> tuple[list[Task], str | None]:
        """The board's listing: the workspace's tasks by status then age (GSI2), those `keep` keeps only.

        One call evaluates at most `reads` tasks, so a narrow filter over a large workspace costs a bounded
        read: the page may then hold fewer than `limit` tasks, with a cursor to read on from.
        """
        pk = keys.task_list_pk(workspace_id)
        condition, values = keys.listing_condition(pk, status)
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": keys.GSI2,
            "KeyConditionExpression": condition,
        }
        matching = _matching(keep)
        if matching is not None:
            built = ConditionExpressionBuilder().build_expression(matching)
            request["FilterExpression"] = built.condition_expression
            request["ExpressionAttributeNames"] = built.attribute_name_placeholders
            values |= built.attribute_value_placeholders
        request["ExpressionAttributeValues"] = to_item(values)
        start = decode_cursor(cursor, {keys.GSI2_PK: pk}, _LIST_KEYS, keys.listing_prefix(status), keys.GSI2_SK)
        if start is not None:
            request["ExclusiveStartKey"] = start
        tasks: list[Task] = []
        left = reads
        with translating_errors():
            while True:
                page = self._db.query(**request, Limit=left)
                left -= page.get("ScannedCount", 0)
                tasks.extend(task_from(from_item(item)) for item in page.get("Items", []))
                if len(tasks) >= limit:
                    return tasks[:limit], self.listing_cursor(tasks[limit - 1])
                last = page.get("LastEvaluatedKey")
                if last is None:
                    return tasks, None
                if left <= 0:
                    return tasks, encode_cursor(last)
                request["ExclusiveStartKey"] = last

    def listing_cursor(self, task: Task) -> str:
        """The cursor of `list_page` that resumes right after this task."""
        return cursor_after(_list_key(task))

    # -- helpers -------------------------------------------------------------------------------

    def _attachment_put(self, workspace_id: str, task_id: str, ref: AttachmentRef) -> dict[str, Any]:
        item = {
            keys.PK: keys.workspace_pk(workspace_id),
            keys.SK: keys.attachment_sk(task_id, ref.id),
            "id": ref.id,
            "filename": ref.filename,
            "mimeType": ref.mime_type,
            "size": ref.size,
            "key": ref.key,
            "createdAt": ref.created_at,
        }
        return {"Put": {"TableName": self._table, "Item": to_item(item), **only_if(NEW_ITEM)}}

    def _count_update(self, account_id: str, workspace_id: str, deltas: dict[str, int]) -> dict[str, Any]:
        counts = Update().only_if(EXISTS)
        for status, delta in deltas.items():
            counts.add(f"taskCounts.{status}", delta)
        return {
            "Update": {
                "TableName": self._table,
                "Key": key(keys.account_pk(account_id), keys.workspace_sk(workspace_id)),
                **counts.params(),
            }
        }

    def _transact(self, items: list[dict[str, Any]], conflict_message: str) -> None:
        with translating_errors(conflict_message):
            self._db.transact_write_items(TransactItems=items)


def touch_task(table: str, workspace_id: str, task_id: str, now: str, comments: int = 0) -> dict[str, Any]:
    """A transaction item that sets the task's `updatedAt` (and adds `comments` to its `commentCount`), and fails
    the transaction if there is no task."""
    update = Update().set("updatedAt", now).only_if(EXISTS)
    if comments:
        update.add("commentCount", comments)
    return {
        "Update": {
            "TableName": table,
            "Key": key(keys.workspace_pk(workspace_id), keys.task_sk(task_id)),
            **update.params(),
        }
    }


# What `_status_change` and the index keys own; an edit riding along with a status change sets the rest.
# `commentCount` moves only by ADD, in the transaction that posts a comment, never set from a read.
_STATUS_OWNED = frozenset({"status", "column", "updatedAt", "history", "statusChanges", "questions", "commentCount"})


def _edits(update: Update, before: Task, after: Task, status: str) -> None:
    """SET and REMOVE the attributes `after` changes on `before`, besides what the status change writes."""
    old = _TASK.dump_python(before, by_alias=True, exclude_none=True)
    new = _TASK.dump_python(after, by_alias=True, exclude_none=True)
    for name in sorted(set(old) | set(new)):
        if name in _STATUS_OWNED and not (name == "questions" and status == "blocked"):
            continue
        if name not in new:
            update.remove(name)
        elif old.get(name) != new[name]:
            update.set(name, new[name])


def _status_change(update: Update, task: Task, status: str, entry: dict[str, Any], column: str) -> Update:
    """`update` moving the task as read to `status`: its history (bounded), its count of changes, its listing (GSI2)
    and `updatedAt` move too.

    Conditional on the status read, so of two concurrent changes to the same old status only one applies.
    """
    if status != "blocked" and task.questions:
        update.remove("questions")  # a blocker's questions go with the blocker
    history, changes = task.changed_to(entry)
    if len(history) == len(task.history) + 1:
        update.set_expr("history", "list_append(#history, :entry)", entry=[entry])
    else:  # at its bound: written whole, safe as the write is conditional on the changes read
        update.set("history", list(history))
    return (
        update.set("status", status)
        .set("column", column)
        .set("updatedAt", entry["at"])
        .set("statusChanges", changes)
        .set(keys.GSI2_SK, keys.listing_sk(status, task.created_at, task.id))
        .only_if(status_is(task.status))
    )


_RELATIONS = {"#id": "id", "#links": "links", "#parent": "parentId"}

# The conditions only tasks use, named once.
_NOT_YET_PUBLISHED = Attr("eventPublicationId").not_exists()  # a completion's event is published once


def _matching(keep: TaskFilter) -> ConditionBase | None:
    """The filter expression of a board listing: every given criterion must hold."""
    conditions: list[ConditionBase] = []
    for value, attribute in (
        (keep.column, "column"),
        (keep.epic_id, "epicId"),
        (keep.project_id, "projectId"),
        (keep.cycle_id, "cycleId"),
        (keep.assignee, "assignee"),
        (keep.assigned_token, "assignedToken"),
    ):
        if value is not None:
            conditions.append(Attr(attribute).eq(value))
    if keep.label is not None:
        conditions.append(Attr("labels").contains(keep.label))
    if keep.mine is not None:
        conditions.append(Attr("assignedToken").eq(keep.mine) | Attr("claim.tokenId").eq(keep.mine))
    if not keep.include_archived:
        conditions.append(Attr("archived").not_exists())
    conditions.extend(Attr("searchText").contains(word) for word in keep.words)
    combined: ConditionBase | None = None
    for condition in conditions:
        combined = condition if combined is None else combined & condition
    return combined


def _queued_at(position: str) -> ConditionBase:
    """Unstarted and at this place in the queue (GSI1): not claimed or moved since it was read there."""
    return status_is("notstarted") & Attr(keys.GSI1_SK).eq(position)


def _takeable_by(token_id: str) -> ConditionBase:
    """A task this agent token may take: one named for no token, or for this one."""
    return Attr("assignedToken").not_exists() | Attr("assignedToken").eq(token_id)


def _unchanged(task: Task) -> ConditionBase:
    """Nobody wrote the task since it was read: not a status change, message, edit or claim (a dequeue's claim
    changes no `updatedAt`, so the claim is compared too; a comment stamped with the very `updatedAt` read would
    pass that, so its count is compared too, and a whole item written over it never counts it away)."""
    return (
        _unchanged_since_read(task)
        & Attr("updatedAt").eq(task.updated_at)
        & _claim_as_read(task)
        & _comments_as_read(task)
    )


def _comments_as_read(task: Task) -> ConditionBase:
    """As many comments as read: none (no attribute, written only once there is one), or the count read."""
    if task.comment_count == 0:
        return Attr("commentCount").not_exists() | Attr("commentCount").eq(0)
    return Attr("commentCount").eq(task.comment_count)


def _claim_as_read(task: Task) -> ConditionBase:
    """The claim is the one read (or still none): nobody claimed, took over or released the task since."""
    return Attr("claim").not_exists() if task.claim is None else Attr("claim.claimedAt").eq(task.claim["claimedAt"])


def _unchanged_since_read(task: Task) -> ConditionBase:
    """No status change since the task was read: as many changes counted (a task stored before the count: its
    history as long). The status alone would let a change read before A -> B -> A apply after them, its entry
    stamped before theirs. Nor a new link: a completion takes itself off the waiting lists of the tasks it blocks
    as read, and one linked since would wait on."""
    links = Attr("links").size().eq(len(task.links))
    if not task.links:
        links = Attr("links").not_exists() | links
    if task.status_changes is None:
        return Attr("statusChanges").not_exists() & Attr("history").size().eq(len(task.history)) & links
    return Attr("statusChanges").eq(task.status_changes) & links


def _held_by(token_id: str, claimed_at: str) -> ConditionBase:
    """Claimed by this token at this time: the claim read, not one taken over since."""
    return Attr("claim.tokenId").eq(token_id) & Attr("claim.claimedAt").eq(claimed_at)


def _due_at(fire_at: str) -> ConditionBase:
    """A cron template still waiting for this fire time: no other invocation fired it yet."""
    return Attr("nextFireAt").eq(fire_at)


def _list_key(task: Task) -> dict[str, Any]:
    """The GSI2 position of a task, as DynamoDB's ExclusiveStartKey wants it."""
    return to_item(
        {
            keys.PK: keys.workspace_pk(task.workspace_id),
            keys.SK: keys.task_sk(task.id),
            keys.GSI2_PK: keys.task_list_pk(task.workspace_id),
            keys.GSI2_SK: keys.listing_sk(task.status, task.created_at, task.id),
        }
    )


# A listing cursor's key: the index's, and the table's it needs to resume.
_LIST_KEYS = (keys.PK, keys.SK, keys.GSI2_SK)


def _cursor_at(workspace_id: str, sk: str) -> str:
    """The cursor resuming right after the item at this sort key of the workspace's partition."""
    return cursor_after(to_item({keys.PK: keys.workspace_pk(workspace_id), keys.SK: sk}))


def _found(task: Task | None, task_id: str) -> Task:
    if task is None:
        raise NotFound(f"no task {task_id} in this workspace")
    return task


# The entities' own (camelCase) field names are their attribute names here; the keys are added around them.
_TASK: TypeAdapter[Task] = TypeAdapter(Task)
_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
_ATTACHMENT: TypeAdapter[AttachmentRef] = TypeAdapter(AttachmentRef)
_ENTRY: TypeAdapter[Entry] = TypeAdapter(Entry)


def task_item(task: Task) -> dict[str, Any]:
    """The task's item: its fields under their camelCase names, its index keys and its search text."""
    item: dict[str, Any] = {
        keys.PK: keys.workspace_pk(task.workspace_id),
        keys.SK: keys.task_sk(task.id),
        keys.GSI2_PK: keys.task_list_pk(task.workspace_id),
        keys.GSI2_SK: keys.listing_sk(task.status, task.created_at, task.id),
        **_TASK.dump_python(task, by_alias=True, exclude_none=True),
    }
    if not task.is_template:
        del item["runCount"]  # a template's count of runs; `ADD runCount` starts it on the first
    if not task.clear_context:
        del item["clearContext"]
    if not task.comment_count:
        del item["commentCount"]  # `ADD commentCount 1` starts it with the first comment
    item["column"] = task.board_column
    item["searchText"] = search_text(task)
    if task.queued:
        item[keys.GSI1_PK] = keys.queue_pk(task.workspace_id, task.assigned_token)
        available = task.claim["leaseExpiresAt"] if task.claim else task.created_at
        item[keys.GSI1_SK] = keys.queue_sk(available, task.id, task.queue_rank)
    _check_item_size(task, item)
    return item


def check_task_size(task: Task) -> None:
    """`PayloadError` if the task's item would pass `TASK_ITEM_BYTES_MAX` (see `task_item`)."""
    task_item(task)


def _check_item_size(task: Task, item: dict[str, Any]) -> None:
    """Refuse, before any write, a task item DynamoDB would refuse: naming the largest of its parts (the search
    text counts as the body it copies)."""
    size = item_size(item)
    if size <= TASK_ITEM_BYTES_MAX:
        return
    parts = {name: _value_size(value) for name, value in item.items()}
    parts["body"] = parts.get("body", 0) + parts.pop("searchText", 0)
    largest = max((name for name in parts if name not in (keys.PK, keys.SK)), key=parts.__getitem__)
    raise PayloadError(
        f"{largest}: task {task.id} would take {size:,} bytes as stored; a task holds at most "
        f"{TASK_ITEM_BYTES_MAX:,} (DynamoDB's item limit), and its {largest} takes {parts[largest]:,} of them",
        field=largest,
    )


def item_size(item: dict[str, Any]) -> int:
    """An item's size as DynamoDB counts it against 400 KB (an upper bound): each attribute's name in UTF-8 plus its
    value; a string its UTF-8, a number at most 21 bytes, a list or map 3 bytes plus 1 per element (and each map
    key's name)."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | float):
        return 21
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, dict):
        return 3 + sum(1 + len(str(k).encode()) + _value_size(v) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return 3 + sum(1 + _value_size(v) for v in value)
    return len(str(value).encode())


def search_text(task: Task) -> str:
    """What the board's text filter matches, lowercased once here (DynamoDB's `contains` is case-sensitive)."""
    parts = [task.identifier or "", task.title, task.summary or "", task.body, " ".join(task.labels)]
    return "\n".join(parts).lower()


def message_item(workspace_id: str, task_id: str, message: Message) -> dict[str, Any]:
    return {
        keys.PK: keys.workspace_pk(workspace_id),
        keys.SK: keys.message_sk(task_id, message.id),
        **_MESSAGE.dump_python(message, by_alias=True, exclude_none=True),
    }


def attachment_values(ref: AttachmentRef) -> dict[str, Any]:
    return _ATTACHMENT.dump_python(ref, by_alias=True)


def attachment_ref(values: dict[str, Any]) -> AttachmentRef:
    return _ATTACHMENT.validate_python(values)


def _message(values: dict[str, Any]) -> Message:
    return _MESSAGE.validate_python(values)


def task_from(values: dict[str, Any]) -> Task:
    return _TASK.validate_python(values)
