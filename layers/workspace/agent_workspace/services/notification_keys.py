"""What every part of notifications stands on: whether the stack can notify at all, the keys derived from its
notification secret (link signing, sealing, VAPID), and the public URL its links and pushes point to."""

from agent_workspace.domain.errors import Unavailable
from agent_workspace.domain.notifications import Keys
from agent_workspace.runtime import Runtime

SLACK_PURPOSE = "slack-webhook-url"  # what a Slack webhook URL is sealed for, with the data key


def enabled(rt: Runtime) -> bool:
    return bool(rt.settings.notification_secret_arn)


def keys(rt: Runtime) -> Keys:
    return Keys.derive(rt.notification_secret.value())


def base_url(rt: Runtime) -> str:
    if not rt.settings.public_url:
        raise Unavailable("the stack's public URL is not set (WORKSPACE_PUBLIC_URL): links could not be made")
    return rt.settings.public_url.rstrip("/")
