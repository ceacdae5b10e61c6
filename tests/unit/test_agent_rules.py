"""The agent repo's rules as the reference writes them (domain/agents.py), at and past each bound."""

import pytest

from agent_workspace.domain import agents
from agent_workspace.domain.errors import PayloadError


@pytest.mark.parametrize(
    ("name", "slug"),
    [("Release Captain", "release-captain"), ("  QA -- bot 2 ", "qa-bot-2"), ("Ünïcode Ärger", "unicode-arger")],
)
def test_a_slug_is_derived_from_the_name(name, slug):
    assert agents.slug_of(name) == slug and agents.check_slug(slug) == slug


def test_a_derived_slug_is_cut_at_64_and_a_name_without_letters_needs_one():
    assert len(agents.slug_of("word " * 40)) <= agents.SLUG_MAX
    with pytest.raises(PayloadError, match="give a slug"):
        agents.slug_of("!!! ???")


@pytest.mark.parametrize("slug", ["Upper", "two--hyphens", "-lead", "trail-", "a" * 65, "", "sp ace"])
def test_a_slug_breaking_the_rule_is_refused(slug):
    with pytest.raises(PayloadError) as refused:
        agents.check_slug(slug)
    assert refused.value.field == "slug"


def test_names_are_1_to_80_characters_of_one_line():
    assert agents.check_name("x" * 80)
    for bad in ("", "   ", "x" * 81, "two\nlines"):
        with pytest.raises(PayloadError):
            agents.check_name(bad)


@pytest.mark.parametrize(
    ("given", "harness"), [("claude-code", "claude-code"), ("Codex-CLI", "codex"), ("agents-md", "other")]
)
def test_harness_ids_and_their_common_spellings(given, harness):
    assert agents.harness_id(given) == harness


def test_an_unknown_harness_is_refused_naming_the_ids_and_default_only_where_allowed():
    with pytest.raises(PayloadError, match="claude-code, codex"):
        agents.harness_id("emacs")
    with pytest.raises(PayloadError):
        agents.harness_id("default")
    assert agents.harness_id("default", allow_default=True) == "default"


def test_profile_settings_are_the_harness_s_own_and_values_are_bounded():
    assert agents.check_settings("claude-code", {"model": "opus", "maxTurns": None, "color": "blue"})
    with pytest.raises(PayloadError, match="settings.sandbox_mode is not a setting claude-code knows"):
        agents.check_settings("claude-code", {"sandbox_mode": "read-only"})
    assert agents.check_settings("codex", {"sandbox_mode": "read-only", "model": "x" * 400})
    with pytest.raises(PayloadError, match="at most 400"):
        agents.check_settings("codex", {"model": "x" * 401})
    with pytest.raises(PayloadError, match="a string, a boolean or null"):
        agents.check_settings("cursor", {"model": 5})


@pytest.mark.parametrize(
    ("harness", "settings"),
    [
        ("claude-code", {"permissionMode": "acceptEdits", "maxTurns": "25", "color": "teal"}),
        ("claude-code", {"permissionMode": None, "maxTurns": None}),
        (
            "codex",
            {"approval_policy": "on-request", "sandbox_mode": "workspace-write", "model_reasoning_effort": "high"},
        ),
    ],
)
def test_values_each_harness_takes_are_accepted(harness, settings):
    assert agents.check_settings(harness, settings) == settings


@pytest.mark.parametrize(
    ("harness", "settings", "expected"),
    [
        ("claude-code", {"permissionMode": "notAMode"}, "settings.permissionMode must be one of default, acceptEdits"),
        ("claude-code", {"permissionMode": True}, "settings.permissionMode must be one of"),
        ("claude-code", {"maxTurns": "lots"}, "settings.maxTurns must be a whole number of 1 or more"),
        ("claude-code", {"maxTurns": "0"}, "settings.maxTurns must be a whole number"),
        ("claude-code", {"maxTurns": True}, "settings.maxTurns must be a whole number"),
        ("codex", {"sandbox_mode": "nonsense"}, "settings.sandbox_mode must be one of read-only"),
        ("codex", {"approval_policy": True}, "settings.approval_policy must be one of untrusted"),
        ("codex", {"model_reasoning_effort": "ultra-mega"}, "settings.model_reasoning_effort must be one of"),
    ],
)
def test_a_value_the_harness_would_refuse_is_refused_naming_the_setting(harness, settings, expected):
    with pytest.raises(PayloadError, match=expected):
        agents.check_settings(harness, settings)
    assert set(agents.PROFILE_SETTINGS) == {*agents.HARNESSES, agents.DEFAULT_PROFILE}


def test_budget_and_brief_bounds():
    assert agents.check_budget(2_000) == 2_000 and agents.check_budget(96_000) == 96_000
    for bad in (1_999, 96_001):
        with pytest.raises(PayloadError):
            agents.check_budget(bad)
    assert agents.check_brief("é" * 8_192)  # 16,384 bytes
    with pytest.raises(PayloadError, match="16,386 bytes"):
        agents.check_brief("é" * 8_193)


def test_memory_names_are_kebab_case_up_to_64():
    assert agents.check_memory_name("release-checklist") and agents.check_memory_name("a" * 64)
    for bad in ("Release", "a" * 65, "a_b", ""):
        with pytest.raises(PayloadError):
            agents.check_memory_name(bad)
