"""Bootstrap a deployed stack from a shell: the REST API needs a human token before it can be used.

    python -m agent_workspace.admin create-account --title "Acme" --table <TableName output> [--region R]
    python -m agent_workspace.admin create-human-token --account-id <id> --table <TableName output>

The table name comes from --table or WORKSPACE_TABLE_NAME (the stack output `TableName`); the region
from --region, AWS_REGION, or boto3's usual chain (AWS_DEFAULT_REGION, the profile). Credentials are
boto3's usual ones. A token is printed once on stdout and nowhere else; only its SHA-256 hash is stored.

Exit codes: 0 done, 1 AWS refused or failed (credentials, permissions, throttling), 2 bad input.
"""

import argparse
import sys
from collections.abc import Sequence

from botocore.exceptions import BotoCoreError, ClientError, NoRegionError

from agent_workspace.config import Settings
from agent_workspace.domain.errors import NotFound, PayloadError, WorkspaceError
from agent_workspace.domain.ids import is_id
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts
from agent_workspace.store.accounts import AccountStore
from agent_workspace.store.clients import AwsClients

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

_TOKEN_NOTE = (
    "The token is shown only now: only its SHA-256 hash is stored. "
    "Send it as 'Authorization: Bearer <token>' to the REST API under /api."
)


class BadInput(Exception):
    """The command line cannot work as given; the message says what to change."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent_workspace.admin",
        description="Create an account, or another human token for one, in a deployed Agent Workspace table.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--table", help="the DynamoDB table: the stack output TableName (default: $WORKSPACE_TABLE_NAME)"
    )
    common.add_argument("--region", help="AWS region of the stack (default: $AWS_REGION, else boto3's configuration)")
    # For tests and the local stack's moto server; not something a deployed stack needs.
    common.add_argument("--endpoint-url", help=argparse.SUPPRESS)

    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    create_account = commands.add_parser(
        "create-account", parents=[common], help="create an account and print its first human token"
    )
    create_account.add_argument("--title", required=True, help="the account's name, e.g. your team or company")
    create_token = commands.add_parser(
        "create-human-token",
        parents=[common],
        help="print another human token for an existing account",
        description=(
            "Print another human token for an existing account; an id with no account in the table is refused."
        ),
    )
    create_token.add_argument("--account-id", required=True, help="the id create-account printed")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # argparse has printed usage and the problem (code 2), or --help (code 0)
        return int(exit_.code or 0)
    settings = Settings()
    table = ""
    try:
        table = _table(args, settings)
        store = _store(args, settings, table)
        if args.command == "create-account":
            return _create_account(store, args.title)
        return _create_human_token(store, args.account_id)
    except BadInput as error:
        return _fail(EXIT_BAD_INPUT, str(error))
    except (PayloadError, NotFound) as error:
        return _fail(EXIT_BAD_INPUT, error.message)
    except WorkspaceError as error:
        if isinstance(error.__cause__, BotoCoreError):  # endpoint unreachable: say which
            return _fail(EXIT_FAILED, str(error.__cause__))
        return _fail(EXIT_FAILED, error.message)
    except ClientError as error:
        details = error.response.get("Error", {})
        if details.get("Code") == "ResourceNotFoundException":
            return _fail(
                EXIT_BAD_INPUT,
                f"table {table!r} not found in that region; pass the stack output TableName and the stack's --region",
            )
        return _fail(EXIT_FAILED, f"AWS refused: {details.get('Code', 'error')}: {details.get('Message', error)}")
    except NoRegionError:
        return _fail(EXIT_BAD_INPUT, "no AWS region: pass --region or set AWS_REGION")
    except BotoCoreError as error:
        return _fail(EXIT_FAILED, str(error))


def _table(args: argparse.Namespace, settings: Settings) -> str:
    if args.table:
        return args.table
    if "table_name" in settings.model_fields_set:
        return settings.table_name
    # The settings default fits the local stack only; a deployed table has a generated name.
    raise BadInput("no table: pass --table <the stack output TableName> or set WORKSPACE_TABLE_NAME")


def _store(args: argparse.Namespace, settings: Settings, table: str) -> AccountStore:
    # Without an explicit region, None lets boto3 resolve it (AWS_DEFAULT_REGION, the profile) rather
    # than the settings' us-east-1 default silently pointing at the wrong region.
    region = args.region or (settings.aws_region if "aws_region" in settings.model_fields_set else None)
    clients = AwsClients(region, args.endpoint_url or settings.aws_endpoint_url)
    return AccountStore(clients.dynamodb, table)


def _create_account(store: AccountStore, title: str) -> int:
    account_id, issued = accounts.create_account(store, title)
    print(f"Account id:   {account_id}")
    print(f"Account:      {title.strip()}")
    print(f"Human token:  {issued.token}")
    print(_TOKEN_NOTE, file=sys.stderr)
    return EXIT_OK


def _create_human_token(store: AccountStore, account_id: str) -> int:
    account_id = account_id.strip()
    if not is_id(account_id):
        raise BadInput(
            f"--account-id {account_id!r} is not an account id (11 base62 characters, as create-account printed it)"
        )
    # Past the cap too: this is how an account whose tokens are all lost is recovered.
    issued = accounts.issue_token(store, TokenKind.HUMAN, account_id, None, beyond_cap=True)
    print(f"Account id:   {account_id}")
    print(f"Token id:     {issued.record.id}")
    print(f"Human token:  {issued.token}")
    print(_TOKEN_NOTE, file=sys.stderr)
    return EXIT_OK


def _fail(code: int, message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
