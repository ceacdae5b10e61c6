"""Every tool the server serves, in the order `help` and `tools/list` show them, each imported when first needed."""

from agent_workspace.tool_registry import Registry, ToolModule

REGISTRY = Registry(
    tools=tuple(
        ToolModule(name, f"agent_workspace.tools.{module}")
        for name, module in (
            ("task", "task"),
            ("memory", "memory"),
            ("skills", "skills"),
            ("workspace", "workspace"),
            ("siteTools", "site_tools"),
            ("pano", "pano"),
            ("board", "board"),
            ("agent", "agent"),
        )
    )
)
