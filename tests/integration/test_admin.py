"""The bootstrap CLI, run as `main(argv)` against the session's moto server."""

import logging

import pytest

from agent_workspace.admin import EXIT_BAD_INPUT, EXIT_OK, main
from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.tokens import HUMAN_TOKENS_PER_ACCOUNT, TokenKind, hash_token
from agent_workspace.runtime import Runtime
from agent_workspace.services.accounts import create_workspace, issue_token

_NOWHERE = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _no_table_or_endpoint_from_the_environment(monkeypatch):
    """Each test names its table and endpoint on the command line, whatever the shell exported."""
    for name in ("WORKSPACE_TABLE_NAME", "WORKSPACE_AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)


def admin(runtime: Runtime, moto_endpoint: str, *argv: str, table: str | None = None) -> int:
    return main(
        [
            *argv,
            "--table",
            table or runtime.settings.table_name,
            "--region",
            "us-east-1",
            "--endpoint-url",
            moto_endpoint,
        ]
    )


def printed(stdout: str) -> dict[str, str]:
    """The `Label:  value` lines the CLI prints, by label."""
    fields = {}
    for line in stdout.splitlines():
        label, sep, value = line.partition(":")
        if sep:
            fields[label.strip()] = value.strip()
    return fields


def test_create_account_prints_a_human_token_of_the_new_account(runtime, moto_endpoint, capsys):
    code = admin(runtime, moto_endpoint, "create-account", "--title", "Acme")

    out = capsys.readouterr().out
    assert code == EXIT_OK
    shown = printed(out)
    assert shown["Account"] == "Acme"
    principal = runtime.accounts.resolve_token(hash_token(shown["Human token"]))
    assert principal is not None
    assert principal.kind is TokenKind.HUMAN
    assert principal.account_id == shown["Account id"]
    assert principal.workspace_id is None


def test_the_new_account_can_create_workspaces(runtime, moto_endpoint, capsys):
    admin(runtime, moto_endpoint, "create-account", "--title", "Acme")
    account_id = printed(capsys.readouterr().out)["Account id"]

    workspace, _ = create_workspace(runtime.accounts, account_id, "Docs", "")

    assert [w.id for w in runtime.accounts.list_workspaces(account_id)] == [workspace.id]


def test_the_table_can_come_from_the_environment(runtime, moto_endpoint, capsys, monkeypatch):
    monkeypatch.setenv("WORKSPACE_TABLE_NAME", runtime.settings.table_name)
    monkeypatch.setenv("WORKSPACE_AWS_ENDPOINT_URL", moto_endpoint)

    code = main(["create-account", "--title", "Acme", "--region", "us-east-1"])

    token = printed(capsys.readouterr().out)["Human token"]
    assert code == EXIT_OK
    assert runtime.accounts.resolve_token(hash_token(token)) is not None


def test_create_human_token_mints_another_token_for_the_same_account(runtime, moto_endpoint, capsys):
    admin(runtime, moto_endpoint, "create-account", "--title", "Acme")
    first = printed(capsys.readouterr().out)

    code = admin(runtime, moto_endpoint, "create-human-token", "--account-id", first["Account id"])

    second = printed(capsys.readouterr().out)
    assert code == EXIT_OK
    assert second["Human token"] != first["Human token"]
    principal = runtime.accounts.resolve_token(hash_token(second["Human token"]))
    assert principal is not None
    assert principal.kind is TokenKind.HUMAN
    assert principal.account_id == first["Account id"]
    assert principal.token_id == second["Token id"]
    # The first token still works: minting another revokes nothing.
    assert runtime.accounts.resolve_token(hash_token(first["Human token"])) is not None


def test_create_human_token_still_mints_at_the_accounts_cap_so_an_operator_can_recover_it(
    runtime, moto_endpoint, capsys
):
    admin(runtime, moto_endpoint, "create-account", "--title", "Acme")
    account_id = printed(capsys.readouterr().out)["Account id"]
    for _ in range(HUMAN_TOKENS_PER_ACCOUNT - 1):
        issue_token(runtime.accounts, TokenKind.HUMAN, account_id, None)
    with pytest.raises(Conflict):  # over REST, the cap holds
        issue_token(runtime.accounts, TokenKind.HUMAN, account_id, None)

    code = admin(runtime, moto_endpoint, "create-human-token", "--account-id", account_id)

    assert code == EXIT_OK
    assert runtime.accounts.resolve_token(hash_token(printed(capsys.readouterr().out)["Human token"])) is not None
    assert len(runtime.accounts.list_tokens(account_id, None)) == HUMAN_TOKENS_PER_ACCOUNT + 1


def test_tokens_go_to_stdout_only_and_never_to_the_log(runtime, moto_endpoint, capsys, caplog):
    with caplog.at_level(logging.DEBUG):
        admin(runtime, moto_endpoint, "create-account", "--title", "Acme")

    captured = capsys.readouterr()
    token = printed(captured.out)["Human token"]
    assert token not in captured.err
    assert token not in caplog.text


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["create-account"], "--title"),
        (["create-account", "--title", "   "], "title must not be empty"),
        (["create-account", "--title", "x" * 201], "at most 200"),
        (["create-human-token", "--account-id", "not-an-id"], "is not an account id"),
        (["delete-everything"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_a_message_naming_the_problem(capsys, argv, complaint):
    # Refused before any AWS call: nothing listens at this endpoint.
    code = main([*argv, "--table", "t", "--region", "us-east-1", "--endpoint-url", _NOWHERE])

    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert complaint in captured.err
    assert captured.out == ""


def test_a_human_token_for_an_account_that_does_not_exist_is_refused(runtime, moto_endpoint, capsys):
    code = admin(runtime, moto_endpoint, "create-human-token", "--account-id", "0kGogHmaqvZ")

    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert "no account 0kGogHmaqvZ" in captured.err
    assert captured.out == ""


def test_a_missing_table_name_exits_2_before_touching_aws(capsys):
    code = main(["create-account", "--title", "Acme", "--region", "us-east-1", "--endpoint-url", _NOWHERE])

    assert code == EXIT_BAD_INPUT
    assert "pass --table" in capsys.readouterr().err


def test_a_table_that_does_not_exist_exits_2_naming_it(runtime, moto_endpoint, capsys):
    code = admin(runtime, moto_endpoint, "create-account", "--title", "Acme", table="no-such-table")

    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert "'no-such-table' not found" in captured.err
    assert captured.out == ""
