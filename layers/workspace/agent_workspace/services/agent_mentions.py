"""@-mentions of an agent's handle in the account's task messages, task comments and pano comments (issue 18):
noted on the agent as they are written, so load_agent reads the newest unread ones with one Query instead of
searching every workspace."""

import re
from datetime import timedelta

from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import WorkspaceError
from agent_workspace.domain.ids import new_id
from agent_workspace.observability import logger
from agent_workspace.runtime import Runtime

# An @handle not glued to a word, an email address or a path before it; linear (the hyphen separates the runs).
_HANDLE = re.compile(r"(?<![\w@./-])@([a-z0-9]+(?:-[a-z0-9]+)*)")
HANDLES_PER_TEXT = 10  # the most agents one text notifies: each costs a lookup and a write
EXCERPT = 240
KEPT_DAYS = 90


def note_mentions(rt: Runtime, account_id: str, text: str, where: str) -> int:
    """Each agent of the account whose @handle `text` names gets a mention; what already stored the text is not
    undone if this fails, so a failure is logged rather than raised."""
    if "@" not in text:
        return 0
    handles: list[tuple[str, int]] = []
    for match in _HANDLE.finditer(text):
        slug = match.group(1)
        if len(slug) <= 64 and slug not in {h for h, _ in handles}:
            handles.append((slug, match.start()))
        if len(handles) == HANDLES_PER_TEXT:
            break
    noted = 0
    now = rt.clock()
    expires = int((now + timedelta(days=KEPT_DAYS)).timestamp())
    for slug, at in handles:
        try:
            agent_id = rt.agents.id_of_slug(account_id, slug)
            if agent_id is None:
                continue
            start = max(0, at - EXCERPT // 2)
            excerpt = " ".join(text[start : start + EXCERPT].split())
            rt.agents.add_mention(
                agent_id, {"id": new_id(), "at": iso(now), "where": where, "excerpt": excerpt}, expires
            )
            noted += 1
        except WorkspaceError as error:
            logger.warning("mention not noted", extra={"handle": slug, "error": error.message})
    return noted
