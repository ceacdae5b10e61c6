"""`make serve`: the whole stack on http://$HOST:$PORT, on moto, seeded with one workspace."""

import json
import os

import uvicorn

from agent_workspace.api.access_log import AccessLog
from agent_workspace.api.app import create_app
from agent_workspace.local.drivers import Drivers
from agent_workspace.local.stack import MotoServer, local_runtime, seed

# On SIGTERM/Ctrl+C uvicorn lets requests in flight finish; an agent's wait for the human (up to
# `agent_wait_seconds`, repeated by each resumed call) would hold the stop for minutes. Past this,
# the requests still running are cancelled: the agent's client sees the connection close and retries.
_GRACEFUL_SHUTDOWN_SECONDS = 2


def main() -> None:
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8000"))
    base = f"http://{host}:{port}"
    moto = MotoServer()
    runtime = local_runtime(
        moto.endpoint_url,
        public_url=base,
        allowed_hosts=[f"{host}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"],
    )
    seeded = seed(
        runtime,
        agent_token=os.environ.get("WORKSPACE_DEV_AGENT_TOKEN") or None,
        human_token=os.environ.get("WORKSPACE_DEV_HUMAN_TOKEN") or None,
    )
    mcp_json = {
        "mcpServers": {
            "agent-workspace": {
                "type": "http",
                "url": f"{base}/mcp",
                "headers": {"Authorization": f"Bearer {seeded.agent_token}"},
            }
        }
    }
    print(
        "\n".join(
            [
                "Agent Workspace is running locally (data lives as long as this process).",
                f"  MCP URL:      {base}/mcp",
                f"  REST API:     {base}/api  (OpenAPI at {base}/openapi.json)",
                f"  Workspace:    Local workspace ({seeded.workspace_id})",
                f"  Agent token:  {seeded.agent_token}",
                f"  Human token:  {seeded.human_token}",
                "",
                "Add this to .mcp.json for Claude Code:",
                json.dumps(mcp_json, indent=2),
                "",
            ]
        ),
        flush=True,
    )
    # Scheduler and SQS-to-Lambda, which moto does not do: cron templates fire, published events fan out.
    drivers = Drivers(runtime).start()
    try:
        # Requests are logged by AccessLog, without the query string uvicorn's access log would print.
        uvicorn.run(
            AccessLog(create_app(runtime)),
            host=host,
            port=port,
            log_level="info",
            access_log=False,
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
        )
    finally:
        drivers.stop()
        moto.stop()


if __name__ == "__main__":
    main()
