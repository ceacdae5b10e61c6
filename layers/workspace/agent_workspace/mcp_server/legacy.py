"""The 18 tool names of the single-purpose era, answered but never listed.

A call to one is rewritten to its tool and action with its arguments as the payload; only names
whose target the registry really serves are answered, so this table covers tools as they land.
"""

OLD_TOOL_NAMES: dict[str, tuple[str, str]] = {
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

# Payload fields that older clients send under another name, per (tool, action).
RENAMED_FIELDS: dict[tuple[str, str], dict[str, str]] = {
    ("task", "reply"): {"chatId": "taskId"},
}
