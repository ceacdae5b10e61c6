"""Pano docs and their comments, in the account's partition; file content lives in S3.

`PANO#<docId>` holds the doc with its markdown and its files' metadata; `PANOCMT#<docId>#<commentId>`
each comment. Writes of a doc are conditional on the revision read, so two saves never interleave.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from agent_workspace.domain.errors import Conflict, NotFound
from agent_workspace.domain.pano import Comment, Doc, PanoFile
from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after
from agent_workspace.store.dynamo import (
    batch_delete,
    get_item,
    key,
    query_all,
    query_prefix,
    query_prefix_page,
    to_item,
    translating_errors,
)
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if, revision_is
from agent_workspace.store.tasks import attachment_ref, attachment_values

_REPLACED = (
    "title",
    "markdown",
    "color",
    "ttlDays",
    "updatedBy",
    "updatedAt",
    "expiresAtIso",
    "revision",
    "files",
    keys.TTL_ATTRIBUTE,
)
_SUMMARY = "id, title, color, ttlDays, author, updatedBy, createdAt, updatedAt, expiresAtIso, #rev, files, commentCount"


class PanoStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def get(self, account_id: str, doc_id: str) -> Doc | None:
        item = get_item(self._db, self._table, keys.account_pk(account_id), keys.pano_sk(doc_id))
        return _doc(item) if item else None

    def list_docs(self, account_id: str) -> list[Doc]:
        """Every doc of the account, without markdown (a projection), in id (creation) order."""
        items = query_all(
            self._db,
            {
                "TableName": self._table,
                "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
                "ExpressionAttributeValues": to_item(
                    {":pk": keys.account_pk(account_id), ":prefix": keys.PANO_SK_PREFIX}
                ),
                "ProjectionExpression": _SUMMARY,
                "ExpressionAttributeNames": {"#rev": "revision"},
            },
        )
        return [_doc(item) for item in items]

    def list_page(self, account_id: str, limit: int, cursor: str | None) -> tuple[list[Doc], str | None]:
        """At most `limit` of the account's docs without markdown, in id (creation) order, after `cursor`: one
        Query (expired ones included: the caller drops them, as `list_docs`'s callers do)."""
        pk = keys.account_pk(account_id)
        projection = {"ProjectionExpression": _SUMMARY, "ExpressionAttributeNames": {"#rev": "revision"}}
        items, after = query_prefix_page(self._db, self._table, pk, keys.PANO_SK_PREFIX, limit, cursor, projection)
        return [_doc(item) for item in items], after

    def listing_cursor(self, account_id: str, doc_id: str) -> str:
        """The cursor that resumes `list_page` right after the doc `doc_id`."""
        return cursor_after(key(keys.account_pk(account_id), keys.pano_sk(doc_id)))

    def write(self, account_id: str, doc: Doc, expected_revision: int | None, expires_epoch: int) -> None:
        """Create (`expected_revision` None) or replace the doc as read at `expected_revision`.

        A replace sets what a save or attach changes and leaves `commentCount` to the comments'
        own atomic counter, so a comment added meanwhile is never counted away.
        """
        item = {**_doc_item(account_id, doc), keys.TTL_ATTRIBUTE: expires_epoch}
        with translating_errors(f"doc {doc.id} was changed meanwhile"):
            if expected_revision is None:
                self._db.put_item(TableName=self._table, Item=to_item(item), **only_if(NEW_ITEM))
                return
            replaced = Update().only_if(revision_is(expected_revision))
            for name in _REPLACED:
                replaced.set(name, item[name])
            self._db.update_item(TableName=self._table, Key=key(item[keys.PK], item[keys.SK]), **replaced.params())

    def add_comment(self, account_id: str, doc_id: str, comment: Comment, now_epoch: int, most: int) -> None:
        """The comment and the doc's count together, only on a live doc with room for it."""
        pk = keys.account_pk(account_id)
        item = {
            keys.PK: pk,
            keys.SK: keys.pano_comment_sk(doc_id, comment.id),
            "id": comment.id,
            "text": comment.text,
            "workspaceId": comment.workspace_id,
            "createdAt": comment.created_at,
        }
        try:
            with translating_errors():
                self._db.transact_write_items(
                    TransactItems=[
                        {
                            "Update": {
                                "TableName": self._table,
                                "Key": key(pk, keys.pano_sk(doc_id)),
                                **Update()
                                .add("commentCount", 1)
                                .only_if(_live(now_epoch) & _room_for_comment(most))
                                .params(),
                            }
                        },
                        {
                            "Put": {
                                "TableName": self._table,
                                "Item": to_item(item),
                                **only_if(NEW_ITEM),
                            }
                        },
                    ]
                )
        except Conflict as conflict:
            if conflict.reasons[:1] != ("ConditionalCheckFailed",):
                raise
            doc = self.get(account_id, doc_id)
            if doc is None or doc.comment_count < most:
                raise NotFound(f"no doc {doc_id} on the pano") from None
            raise Conflict(f"doc {doc_id} has {most} comments, the most a doc keeps") from None

    def comments(self, account_id: str, doc_id: str) -> list[Comment]:
        items = query_prefix(self._db, self._table, keys.account_pk(account_id), keys.pano_comment_prefix(doc_id))
        return [Comment(i["id"], i["text"], i.get("workspaceId"), i["createdAt"]) for i in items]

    def delete(self, account_id: str, doc_id: str, revision: int | None = None) -> None:
        """The doc (as read at `revision`, if given), then its comments."""
        pk = keys.account_pk(account_id)
        request: dict[str, Any] = {"TableName": self._table, "Key": key(pk, keys.pano_sk(doc_id))}
        if revision is not None:
            request |= only_if(revision_is(revision))
        with translating_errors(f"doc {doc_id} was changed meanwhile"):
            self._db.delete_item(**request)
        doomed = query_all(
            self._db,
            {
                "TableName": self._table,
                "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
                "ExpressionAttributeValues": to_item({":pk": pk, ":prefix": keys.pano_comment_prefix(doc_id)}),
                "ProjectionExpression": "PK, SK",
            },
        )
        batch_delete(
            self._db, self._table, [key(d[keys.PK], d[keys.SK]) for d in doomed], f"doc {doc_id} is gone; retry"
        )


def _live(now_epoch: int) -> ConditionBase:
    """The doc is there and not expired (TTL deletes an expired doc only some time later)."""
    return EXISTS & Attr(keys.TTL_ATTRIBUTE).gt(now_epoch)


def _room_for_comment(most: int) -> ConditionBase:
    """Fewer than `most` comments so far: the comments' own atomic counter decides, not a read."""
    return Attr("commentCount").not_exists() | Attr("commentCount").lt(most)


def _doc_item(account_id: str, doc: Doc) -> dict[str, Any]:
    return {
        keys.PK: keys.account_pk(account_id),
        keys.SK: keys.pano_sk(doc.id),
        "id": doc.id,
        "title": doc.title,
        "markdown": doc.markdown,
        "color": doc.color,
        "ttlDays": doc.ttl_days,
        "author": doc.author_workspace_id,
        "updatedBy": doc.updated_by,
        "createdAt": doc.created_at,
        "updatedAt": doc.updated_at,
        "expiresAtIso": doc.expires_at,
        "revision": doc.revision,
        "files": [_file_values(f) for f in doc.files],
        "commentCount": doc.comment_count,
    }


def _file_values(file: PanoFile) -> dict[str, Any]:
    return {**attachment_values(file.ref), "linked": file.linked}


def _doc(values: dict[str, Any]) -> Doc:
    return Doc(
        id=values["id"],
        title=values["title"],
        markdown=values.get("markdown", ""),
        color=values["color"],
        ttl_days=int(values["ttlDays"]),
        author_workspace_id=values["author"],
        updated_by=values["updatedBy"],
        created_at=values["createdAt"],
        updated_at=values["updatedAt"],
        expires_at=values["expiresAtIso"],
        revision=int(values["revision"]),
        files=tuple(PanoFile(attachment_ref(f), bool(f["linked"])) for f in values.get("files", [])),
        comment_count=int(values.get("commentCount", 0)),
    )
