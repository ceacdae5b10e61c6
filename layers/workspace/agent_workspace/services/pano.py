"""The Pano: saving, reading, commenting, attaching and deleting account-wide docs, and their expiry.

A doc expires `ttlDays` after its last save. DynamoDB's TTL deletes the item lazily, so reads
check the expiry themselves; and a one-shot schedule per doc (`pano-<accountId>-<docId>`), moved
by every save, deletes the doc, its comments and its files at that time through the schedule
function, so the files go with it.
"""

from contextlib import suppress
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from agent_workspace.backoff import back_off
from agent_workspace.domain import paging
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError, Unavailable
from agent_workspace.domain.ids import check_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.pano import (
    COMMENT_MAX,
    COMMENTS_MAX,
    DEFAULT_COLOR,
    FILES_MAX,
    TTL_DAYS_DEFAULT,
    Comment,
    Doc,
    PanoFile,
    check_doc,
    check_links,
    linked_names,
    uri_of,
)
from agent_workspace.domain.resources import ResourceInfo
from agent_workspace.domain.tasks import AttachmentRef, NewAttachment, decode_attachments
from agent_workspace.domain.text import check_text
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services.agent_mentions import note_mentions
from agent_workspace.store.blobs import pano_prefix

EXPIRY_KIND = "panoExpiry"
_SAVE_ROUNDS = 5


def save(
    rt: Runtime,
    actor: Actor,
    doc_id: str | None,
    title: str,
    markdown: str,
    color: str | None,
    ttl_days: int | None,
    files: list[Any],
) -> Doc:
    """Create a doc, or replace one's title and markdown completely; files sent are linked files.

    A replace that names no color keeps the doc's: the save replaces the title and markdown, and a doc
    made green stays green. ttlDays counts from each save, so it is the default again unless sent.
    """
    ttl_days = TTL_DAYS_DEFAULT if ttl_days is None else ttl_days
    check_doc(title, markdown, color or DEFAULT_COLOR, ttl_days)
    decoded = _decoded(files, "files")
    check_links(markdown, [item.filename for item in decoded])
    if doc_id is None:
        return _create(rt, actor, title, markdown, color or DEFAULT_COLOR, ttl_days, decoded)
    check_id(doc_id, "id")
    for attempt in range(_SAVE_ROUNDS):
        current = _live(rt, actor.account_id, doc_id)
        now = rt.clock()
        sent = {item.filename for item in decoded}
        still_linked = linked_names(markdown)
        kept = [f for f in current.files if f.name not in sent and (not f.linked or f.name in still_linked)]
        _check_file_count(len(kept) + len(decoded))  # before anything is uploaded
        uploaded = _upload(rt, actor.account_id, doc_id, decoded, iso(now), linked=True)
        merged = (*kept, *uploaded)
        doc = replace(
            current,
            title=title,
            markdown=markdown,
            color=color or current.color,
            ttl_days=ttl_days,
            updated_by=actor.workspace_id,
            updated_at=iso(now),
            expires_at=iso(now + timedelta(days=ttl_days)),
            revision=current.revision + 1,
            files=merged,
        )
        if not _written(rt, actor.account_id, doc, current.revision, uploaded):
            back_off(attempt)
            continue  # another save won: apply this one on top of it
        _settle(rt, actor.account_id, doc, dropped=[f for f in current.files if f not in kept])
        count("PanoDocSaved")
        return doc
    raise Unavailable(f"doc {doc_id} is being saved by others; retry shortly")


def read(rt: Runtime, account_id: str, doc_id: str, include_comments: bool, include_attachments: bool) -> dict:
    doc = _live(rt, account_id, doc_id)
    seconds = rt.settings.attachment_url_seconds
    shown: dict[str, Any] = {
        **doc.summary(),
        "markdown": doc.markdown,
        "files": [_file(rt, f, seconds) for f in doc.files if f.linked],
    }
    if include_attachments:
        shown["attachments"] = [_file(rt, f, seconds) for f in doc.files if not f.linked]
    if include_comments:
        shown["comments"] = [c.public() for c in rt.pano.comments(account_id, doc_id)]
    return shown


def comment(rt: Runtime, account_id: str, workspace_id: str | None, doc_id: str, text: str) -> Comment:
    check_id(doc_id, "id")
    check_text(text, "comment", COMMENT_MAX)
    now = rt.clock()
    new = Comment(new_id(), text, workspace_id, iso(now))
    rt.pano.add_comment(account_id, doc_id, new, int(now.timestamp()), COMMENTS_MAX)
    count("PanoCommentAdded")
    note_mentions(rt, account_id, text, f"a comment on pano doc {doc_id}")
    return new


def attach(rt: Runtime, actor: Actor, doc_id: str, files: list[Any]) -> Doc:
    """Add files the markdown need not link; a name already on the doc is refused."""
    decoded = _decoded(files, "files")
    if not decoded:
        raise PayloadError("files must hold at least one file", field="files")
    for attempt in range(_SAVE_ROUNDS):
        current = _live(rt, actor.account_id, doc_id)
        taken = {f.name for f in current.files}
        for index, item in enumerate(decoded):
            if item.filename in taken:
                raise PayloadError(
                    f"files[{index}] {item.filename!r} is already a file of doc {doc_id}",
                    field=f"files[{index}].filename",
                )
        _check_file_count(len(current.files) + len(decoded))
        uploaded = _upload(rt, actor.account_id, doc_id, decoded, iso(rt.clock()), linked=False)
        doc = replace(current, files=(*current.files, *uploaded), revision=current.revision + 1)
        if not _written(rt, actor.account_id, doc, current.revision, uploaded):
            back_off(attempt)
            continue
        count("PanoFilesAttached")
        return doc
    raise Unavailable(f"doc {doc_id} is being saved by others; retry shortly")


def delete(rt: Runtime, account_id: str, doc_id: str) -> Doc:
    doc = _live(rt, account_id, doc_id)
    _remove(rt, account_id, doc)
    count("PanoDocDeleted")
    return doc


def list_docs(rt: Runtime, account_id: str) -> list[dict[str, Any]]:
    now = rt.clock()
    return [d.summary() for d in rt.pano.list_docs(account_id) if parse_iso(d.expires_at) > now]


RESOURCE_PAGE = 50  # docs per `resources/list` page (without markdown: a projection)


def get_doc(rt: Runtime, account_id: str, doc_id: str) -> Doc:
    """The doc as `read` finds it: the account's, unless unknown, deleted or expired (`NotFound`)."""
    return _live(rt, account_id, doc_id)


def resource_page(rt: Runtime, account_id: str, cursor: str | None, budget: int) -> tuple[list[dict], str | None]:
    """A page of the account's live docs as resources (`ResourceInfo.public`), within `budget` bytes; a page
    whose docs all expired is empty, with the cursor to the rest."""
    found, next_cursor = rt.pano.list_page(account_id, RESOURCE_PAGE, cursor)
    now = rt.clock()
    return paging.fill(
        [doc for doc in found if parse_iso(doc.expires_at) > now],
        next_cursor,
        budget=budget,
        shown=lambda doc: _resource(doc).public(),
        cursor_after=lambda doc: rt.pano.listing_cursor(account_id, doc.id),
        name=lambda doc: uri_of(doc.id),
    )


def expire(rt: Runtime, event: dict[str, Any]) -> str:
    """The doc's expiry schedule fired: delete it unless a later save moved its expiry."""
    account_id, doc_id = check_id(event.get("accountId", ""), "accountId"), check_id(event.get("docId", ""), "docId")
    doc = rt.pano.get(account_id, doc_id)
    if doc is not None and parse_iso(doc.expires_at) > rt.clock():
        _arm(rt, account_id, doc)  # saved meanwhile: make sure the schedule points at the new expiry
        return "extended"
    if doc is not None:
        _remove(rt, account_id, doc)
    else:  # deleted already (by TTL, perhaps), or its write never happened: clear whatever is left
        rt.pano.delete(account_id, doc_id)
        rt.blobs.delete_prefix(pano_prefix(account_id, doc_id))
        rt.schedules.disarm(_schedule_name(account_id, doc_id))
    count("PanoDocExpired")
    return "expired"


# -- helpers ------------------------------------------------------------------------------------


def _create(
    rt: Runtime, actor: Actor, title: str, markdown: str, color: str, ttl_days: int, decoded: list[NewAttachment]
) -> Doc:
    _check_file_count(len(decoded))
    now = rt.clock()
    doc_id = new_id()
    doc = Doc(
        id=doc_id,
        title=title,
        markdown=markdown,
        color=color,
        ttl_days=ttl_days,
        author_workspace_id=actor.workspace_id,
        updated_by=actor.workspace_id,
        created_at=iso(now),
        updated_at=iso(now),
        expires_at=iso(now + timedelta(days=ttl_days)),
    )
    # The expiry schedule first: should anything below fail for good, it still finds and deletes stray files.
    _arm(rt, actor.account_id, doc, new=True)
    uploaded: list[PanoFile] = []
    try:
        uploaded = _upload(rt, actor.account_id, doc_id, decoded, iso(now), linked=True)
        doc = replace(doc, files=tuple(uploaded))
        if not _written(rt, actor.account_id, doc, None, uploaded):
            raise Conflict(f"doc {doc_id} already exists")  # a fresh random id: never expected
    except BaseException:
        with suppress(Exception):
            rt.schedules.disarm(_schedule_name(actor.account_id, doc_id))
        raise
    count("PanoDocSaved")
    return doc


def _written(rt: Runtime, account_id: str, doc: Doc, expected_revision: int | None, uploaded: list[PanoFile]) -> bool:
    """Write the doc: True once it is stored, False if another save won (its files are taken back then).

    A write DynamoDB applied but answered with a 5xx is retried by botocore and then fails its own
    condition; reading the doc back tells that apart from a lost race, so a saved doc is never undone.
    """
    try:
        rt.pano.write(account_id, doc, expected_revision, _epoch(doc.expires_at))
        return True
    except Conflict:
        stored = rt.pano.get(account_id, doc.id)
        if stored is not None and stored.revision == doc.revision and stored.files == doc.files:
            return True
        _take_back(rt, uploaded)
        return False
    except BaseException:
        _take_back(rt, uploaded)
        raise


def _settle(rt: Runtime, account_id: str, doc: Doc, dropped: list[PanoFile]) -> None:
    """After a saved replace: move the expiry schedule and delete the files the doc no longer has.

    Both are housekeeping on a save that happened: a failure is logged, never reported as a failed
    save (a stale schedule fires, sees the later expiry and re-arms itself).
    """
    try:
        _arm(rt, account_id, doc)
    except Exception:
        logger.exception("doc saved, but its expiry schedule was not moved", extra={"docId": doc.id})
    _take_back(rt, dropped)


def _live(rt: Runtime, account_id: str, doc_id: str) -> Doc:
    """The doc, unless unknown, deleted or expired (TTL deletes late, so expiry is checked here)."""
    check_id(doc_id, "id")
    doc = rt.pano.get(account_id, doc_id)
    if doc is None or parse_iso(doc.expires_at) <= rt.clock():
        raise NotFound(f"no doc {doc_id} on the pano (unknown, deleted or expired)")
    return doc


def _remove(rt: Runtime, account_id: str, doc: Doc) -> None:
    rt.schedules.disarm(_schedule_name(account_id, doc.id))
    rt.pano.delete(account_id, doc.id)
    rt.blobs.delete_prefix(pano_prefix(account_id, doc.id))


def _decoded(files: list[Any], field_name: str) -> list[NewAttachment]:
    decoded = decode_attachments(files, field_name)
    seen: set[str] = set()
    for index, item in enumerate(decoded):
        if item.filename in seen:
            raise PayloadError(
                f"{field_name}[{index}].filename {item.filename!r} is used twice in this call",
                field=f"{field_name}[{index}].filename",
            )
        seen.add(item.filename)
    return decoded


def _upload(
    rt: Runtime, account_id: str, doc_id: str, decoded: list[NewAttachment], now: str, linked: bool
) -> list[PanoFile]:
    uploaded: list[PanoFile] = []
    try:
        for item in decoded:
            key = f"{pano_prefix(account_id, doc_id)}{new_id()}"
            rt.blobs.put(key, item.content, item.mime_type)
            ref = AttachmentRef(item.id, item.filename, item.mime_type, len(item.content), key, now)
            uploaded.append(PanoFile(ref, linked))
    except BaseException:
        _take_back(rt, uploaded)
        raise
    return uploaded


def _take_back(rt: Runtime, files: list[PanoFile] | tuple[PanoFile, ...]) -> None:
    with suppress(Exception):  # best effort: an object left behind goes with the doc's prefix later
        rt.blobs.delete([f.ref.key for f in files])


def _check_file_count(total: int) -> None:
    if total > FILES_MAX:
        raise PayloadError(f"a doc holds at most {FILES_MAX} files; this would make {total}", field="files")


def _file(rt: Runtime, file: PanoFile, seconds: int) -> dict[str, Any]:
    ref = file.ref
    return {
        "name": ref.filename,
        "mimeType": ref.mime_type,
        "size": ref.size,
        "url": rt.blobs.link(ref.key, ref.filename, seconds),
    }


def _resource(doc: Doc) -> ResourceInfo:
    return ResourceInfo(
        uri=uri_of(doc.id),
        name=doc.id,
        title=doc.title,
        description=f"A pano doc every workspace of the account shares ({doc.color}; expires {doc.expires_at})",
        mime_type="text/markdown",
    )


def _schedule_name(account_id: str, doc_id: str) -> str:
    return f"pano-{account_id}-{doc_id}"


def _arm(rt: Runtime, account_id: str, doc: Doc, new: bool = False) -> None:
    payload = {"kind": EXPIRY_KIND, "accountId": account_id, "docId": doc.id, "expiresAt": doc.expires_at}
    at = parse_iso(doc.expires_at)
    if new:
        rt.schedules.create(_schedule_name(account_id, doc.id), at, payload)
    else:
        rt.schedules.arm(_schedule_name(account_id, doc.id), at, payload)


def _epoch(moment: str) -> int:
    return int(datetime.timestamp(parse_iso(moment)))
