"""Answer links (issue 21): the signed link in a notification that answers a question, or decides a site call or a
permission question, through the service that owns it; so this module stands above those services.

A link is its own credential: a signed, expiring token for one answer to one question. Reading it only shows what
it would answer; using it answers once, refused by the answer's own conditional write after that.
"""

from typing import Any

from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.notifications import ANSWER_KINDS, claims_of_kind, read_link
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel, elicitations, site_tools
from agent_workspace.services.notification_keys import enabled, keys
from agent_workspace.services.notification_subjects import subject


def read_answer_link(rt: Runtime, token: str) -> dict[str, Any]:
    """A valid link's claims, and whether what it answers still waits; PayloadError or NotFound otherwise."""
    if not enabled(rt):
        raise NotFound("answer links are not set up on this stack")
    claims = claims_of_kind(read_link(keys(rt).link, token, rt.clock()), ANSWER_KINDS)
    found = subject(rt, claims.get("k", ""), claims["acct"], claims["w"], claims["id"], None)
    return {"claims": claims, "waiting": found is not None, "text": found[1] if found else ""}


def use_answer_link(rt: Runtime, token: str) -> dict[str, Any]:
    """Answer with the link, once: the answer's own conditional write refuses a second use or a late one."""
    claims = read_answer_link(rt, token)["claims"]
    kind, workspace_id, ref = claims["k"], claims["w"], claims["id"]
    if kind == "question":
        elicitations.answer(rt, workspace_id, ref, claims["a"], claims["c"])
    elif kind == "siteCall":
        site_tools.decide(rt, claims["acct"], workspace_id, ref, claims["d"])
    elif kind == "toolApproval":
        channel.decide(rt, workspace_id, ref, claims["d"])
    else:
        raise PayloadError("this link is not one the workspace made", field="token")
    count("NotificationLinkUsed")
    return claims
