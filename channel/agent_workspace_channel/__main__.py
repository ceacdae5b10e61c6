"""`agent-workspace-channel --url <MCP URL>`, the agent token in $AGENT_WORKSPACE_TOKEN: what Claude Code spawns.

stdout is the MCP wire; everything the bridge says goes to stderr (Claude Code keeps it in its debug log), and none
of it is the token or the text of a task or message.
"""

import contextlib
import logging
import sys

import anyio
from mcp.server.stdio import stdio_server

from agent_workspace_channel.config import Config, ConfigError, read
from agent_workspace_channel.server import Bridge
from agent_workspace_channel.state import State
from agent_workspace_channel.upstream import Workspace

logger = logging.getLogger("agent_workspace_channel")


def _log_to_stderr() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("agent-workspace-channel %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    logger.setLevel(logging.INFO)


async def run(config: Config) -> None:
    workspace = Workspace(config)
    try:
        bridge = Bridge(config, workspace, State.load(config.state))
        logger.info("serving %s over stdio (cursor in %s)", config.url, config.state)
        async with stdio_server() as (read_stream, write_stream):
            await bridge.serve(read_stream, write_stream)
    finally:
        await workspace.aclose()


def main() -> None:
    _log_to_stderr()
    try:
        config = read()
    except ConfigError as error:
        print(f"agent-workspace-channel: {error}", file=sys.stderr)
        sys.exit(2)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(run, config)


if __name__ == "__main__":
    main()
