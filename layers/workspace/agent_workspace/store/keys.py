"""Key names and key builders of the single table.

The attribute and index names here must match the table in `template.yaml` (a contract test checks
them); `docs/data-model.md` lists the access pattern each key serves.
"""

PK = "PK"
SK = "SK"
GSI1 = "GSI1"
GSI1_PK = "GSI1PK"
GSI1_SK = "GSI1SK"
TTL_ATTRIBUTE = "expiresAt"


def account_pk(account_id: str) -> str:
    return f"ACCOUNT#{account_id}"


ACCOUNT_SK = "ACCOUNT"


def workspace_sk(workspace_id: str) -> str:
    return f"WORKSPACE#{workspace_id}"


WORKSPACE_SK_PREFIX = "WORKSPACE#"


def token_pk(token_hash: str) -> str:
    return f"TOKEN#{token_hash}"


TOKEN_SK = "TOKEN"


def token_ref_sk(token_id: str) -> str:
    return f"TOKENREF#{token_id}"


TOKEN_REF_SK_PREFIX = "TOKENREF#"
