"""`make serve`: the whole stack on http://$HOST:$PORT, on moto, seeded with one workspace."""

import json
import os
import sys
from pathlib import Path

import uvicorn

from agent_workspace.api.access_log import AccessLog
from agent_workspace.api.app import create_app
from agent_workspace.local import push_gateway
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
    push_gateway.configure(runtime, f"{host}:{port}")  # clients hold a WebSocket here instead of long-polling
    seeded = seed(
        runtime,
        agent_token=os.environ.get("WORKSPACE_DEV_AGENT_TOKEN") or None,
        human_token=os.environ.get("WORKSPACE_DEV_HUMAN_TOKEN") or None,
    )
    print(
        "\n".join(
            [
                "Agent Workspace is running locally (data lives as long as this process).",
                f"  MCP URL:      {base}/mcp  (the nine action tools)",
                f"  By reference: {base}/mcp/agentrq (AgentRQ's 7 tools), {base}/mcp/masaro (Masaro's 19),",
                f"                {base}/mcp/omr (On My Radar's 21), each listing its tools by their own names",
                f"  REST API:     {base}/api  (OpenAPI at {base}/openapi.json)",
                f"  Push:         ws://{host}:{port}{push_gateway.PATH}  (a ticket from POST /api/push/tickets)",
                f"  Workspace:    Local workspace ({seeded.workspace_id})",
                f"  Agent token:  {seeded.agent_token}",
                f"  Human token:  {seeded.human_token}",
                "",
                *_sign_in_setup(f"{base}/mcp"),
                *_claude_code_setup(f"{base}/mcp", seeded.agent_token),
            ]
        ),
        flush=True,
    )
    # Scheduler and SQS-to-Lambda, which moto does not do: cron templates fire, published events fan out.
    drivers = Drivers(runtime).start()
    try:
        # Requests are logged by AccessLog, without the query string uvicorn's access log would print.
        uvicorn.run(
            push_gateway.PushGateway(AccessLog(create_app(runtime)), runtime),
            host=host,
            port=port,
            ws=push_gateway.UVICORN_WS,
            log_level="info",
            access_log=False,
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
        )
    finally:
        drivers.stop()
        moto.stop()


def _sign_in_setup(mcp_url: str) -> list[str]:
    """How a client without a pasted header connects: OAuth sign-in, the consent given in the browser."""
    return [
        "Connect with sign-in (OAuth; no token in any file):",
        f"  claude mcp add --transport http agent-workspace {mcp_url}",
        "  then /mcp in Claude Code, pick agent-workspace, Authenticate: the browser opens this server's consent page;",
        "  paste the human token above, choose the workspace, Allow. Cursor and VS Code: add the URL alone and click",
        "  Connect / Start. claude.ai and ChatGPT reach only a public https URL: connect them to a deployed stack.",
        "",
    ]


def _claude_code_setup(mcp_url: str, agent_token: str) -> list[str]:
    """The .mcp.json entries for Claude Code: the HTTP server, or the channel (channel/) that also pushes tasks."""
    http = {"type": "http", "url": mcp_url, "headers": {"Authorization": f"Bearer {agent_token}"}}
    # `make serve` installs the channel into the venv: its full path works whether or not the venv is on PATH.
    script = Path(sys.executable).with_name("agent-workspace-channel")
    channel = {
        "command": str(script) if script.exists() else "agent-workspace-channel",
        "args": ["--url", mcp_url],
        "env": {"AGENT_WORKSPACE_TOKEN": agent_token},
    }
    return [
        "Add this to .mcp.json for Claude Code:",
        json.dumps({"mcpServers": {"agent-workspace": http}}, indent=2),
        "",
        "Or this entry instead, for the same tools plus new tasks, replies and permission prompts pushed into the",
        "session (a Claude Code channel, see README):",
        json.dumps({"mcpServers": {"agent-workspace": channel}}, indent=2),
        "and start Claude Code with the channel enabled:",
        "  claude --dangerously-load-development-channels server:agent-workspace",
        "",
    ]


if __name__ == "__main__":
    main()
