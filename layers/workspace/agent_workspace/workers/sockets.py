"""The push function's logic: API Gateway's WebSocket events, by route, to `services.push`.

`$connect` carries the ticket in its query string (a browser cannot send headers on a WebSocket) and is refused
with 401 unless the ticket is good; `$disconnect` forgets the connection; `$default` answers a client's frames
(a ping with a pong) through the route's response. Nothing here posts to a socket: only the events function
holds `execute-api:ManageConnections`.
"""

import json
from typing import Any

from agent_workspace.domain import push as rules
from agent_workspace.domain.errors import WorkspaceError
from agent_workspace.observability import logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import push


def handle(event: dict[str, Any], runtime: Runtime) -> dict[str, Any]:
    context = event.get("requestContext") or {}
    route, connection_id = context.get("routeKey"), str(context.get("connectionId") or "")
    if route == "$connect":
        ticket = (event.get("queryStringParameters") or {}).get("ticket")
        try:
            push.connect(runtime, connection_id, ticket)
        except WorkspaceError as error:
            # The reason goes to the log, not the client: API Gateway answers a refused upgrade with a bare status.
            logger.info("socket refused", extra={"connectionId": connection_id, "why": error.message})
            return {"statusCode": error.http_status}
        return {"statusCode": 200}
    if route == "$disconnect":
        try:
            push.disconnect(runtime, connection_id)
        except WorkspaceError as error:  # the socket is closed either way; TTL removes what stays behind
            logger.warning("disconnect not recorded", extra={"connectionId": connection_id, "why": error.message})
        return {"statusCode": 200}
    return {"statusCode": 200, "body": json.dumps(rules.answer(event.get("body")), separators=(",", ":"))}
