"""Tool names of other products, answered but never listed: AgentRQ's 18 of the single-purpose era, and the
task board's 19 (Masaro's).

A call to one is rewritten to its tool and action with its arguments as the payload; only names
whose target the registry really serves are answered, so this table covers tools as they land.
"""

AGENTRQ_NAMES: dict[str, tuple[str, str]] = {
    "createTask": ("task", "create"),
    "getTask": ("task", "get"),
    "updateTaskStatus": ("task", "updateStatus"),
    "reply": ("task", "reply"),
    "elicit": ("task", "elicit"),
    "getAttachment": ("task", "getAttachment"),
    "loadMemory": ("memory", "load"),
    "saveMemory": ("memory", "save"),
    "deleteMemory": ("memory", "delete"),
    "searchSkills": ("skills", "search"),
    "loadSkill": ("skills", "load"),
    "saveSkill": ("skills", "save"),
    "deleteSkill": ("skills", "delete"),
    "getWorkspace": ("workspace", "get"),
    "publishEvent": ("workspace", "publishEvent"),
    "listSiteTools": ("siteTools", "search"),
    "getSiteToolDefinition": ("siteTools", "getDefinition"),
    "callSiteTool": ("siteTools", "call"),
}
# Masaro's task board, called with flat camelCase arguments as its reference names them, in its order (context,
# work, authoring, company knowledge), which /mcp/masaro lists them in.
MASARO_NAMES: dict[str, tuple[str, str]] = {
    "get_workspace_context": ("board", "context"),
    "get_project_context": ("board", "project"),
    "list_tasks": ("task", "list"),
    "get_task": ("task", "show"),
    "get_next_task": ("task", "next"),
    "claim_task": ("task", "claim"),
    "update_progress": ("task", "progress"),
    "complete_task": ("task", "complete"),
    "report_blocker": ("task", "reportBlocker"),
    "release_task": ("task", "release"),
    "create_task": ("task", "propose"),
    "update_task": ("task", "edit"),
    "archive_task": ("task", "archive"),
    "create_project": ("board", "createProject"),
    "create_epic": ("board", "createEpic"),
    "link_tasks": ("task", "link"),
    "add_comment": ("task", "comment"),
    "search": ("task", "search"),
    "fetch": ("task", "fetch"),
}
# On My Radar's Agent Repo, with the reference's own fields (issue 18: these land first).
OMR_NAMES: dict[str, tuple[str, str]] = {
    "list_agents": ("agent", "list"),
    "create_agent": ("agent", "create"),
    "update_agent": ("agent", "update"),
    "update_agent_prompt": ("agent", "updatePrompt"),
    "list_agent_prompt_versions": ("agent", "promptVersions"),
    "get_agent_prompt": ("agent", "getPrompt"),
    "load_agent": ("agent", "load"),
    "agent_recall": ("agent", "recall"),
    "agent_remember": ("agent", "remember"),
    "agent_forget": ("agent", "forget"),
    "get_agent_profiles": ("agent", "profiles"),
    "set_agent_profile": ("agent", "setProfile"),
    "delete_agent_profile": ("agent", "deleteProfile"),
    "list_agent_briefs": ("agent", "briefs"),
    "get_agent_brief": ("agent", "getBrief"),
    "update_agent_brief": ("agent", "updateBrief"),
    "rename_agent_brief": ("agent", "renameBrief"),
    "agent_activity": ("agent", "activity"),
    "checkout_agent": ("agent", "checkout"),
    "import_agent": ("agent", "import"),
    "export_agent": ("agent", "export"),
}
OLD_TOOL_NAMES: dict[str, tuple[str, str]] = AGENTRQ_NAMES | MASARO_NAMES | OMR_NAMES

# Payload fields that older clients send under another name, per (tool, action).
RENAMED_FIELDS: dict[tuple[str, str], dict[str, str]] = {
    ("task", "reply"): {"chatId": "taskId"},
}
