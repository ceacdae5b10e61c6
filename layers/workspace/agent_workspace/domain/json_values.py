"""JSON from outside that is stored as it is (a question's schema and answer, a site's tools): bounded on the way in.

DynamoDB refuses an item over 400 KB, nesting deeper than 32 levels, a number it cannot hold exactly, an empty
name in a map and text that is no UTF-8 (a lone surrogate, which JSON's `\\ud800` can carry); each of those
reached the caller as "internal error" (and moto keeps an empty name, but reads the item back broken). Checked
here first, the refusal names the field at fault.
"""

import decimal
import json
import re
from typing import Any

from agent_workspace.domain.errors import PayloadError

# DynamoDB numbers as boto3 writes them (its DYNAMODB_CONTEXT): 38 significant digits, exponents -130 to +125,
# and any rounding is an error rather than a silent change.
_DYNAMODB_NUMBERS = decimal.Context(
    prec=38,
    Emin=-128,
    Emax=126,
    traps=[decimal.Clamped, decimal.Overflow, decimal.Inexact, decimal.Rounded, decimal.Underflow],
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_json(value: Any, field: str, *, max_bytes: int, max_depth: int) -> None:
    """`PayloadError` naming where `value` nests deeper than `max_depth` objects and arrays, holds a number DynamoDB
    cannot store, an empty key or a lone surrogate, or takes more than `max_bytes` as UTF-8 JSON. Iterative, so no
    nesting can exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(value, field, 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                raise PayloadError(f"{where} nests more than {max_depth} objects and arrays deep", field=where)
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                at = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}"
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise PayloadError(f"{where} has a key that is no UTF-8 text (a lone surrogate)", field=where)
                if key == "":
                    raise PayloadError(f"{where} has an empty key, which the store cannot hold", field=where)
                stack.append((child, at, depth + 1))
        elif isinstance(item, str) and _SURROGATE.search(item):
            raise PayloadError(f"{where} is no UTF-8 text: it holds a lone surrogate", field=where)
        elif isinstance(item, int | float) and not isinstance(item, bool) and not _storable(item):
            raise PayloadError(
                f"{where} is a number DynamoDB cannot store (at most 38 digits, magnitude 1e-130 to 1e126)",
                field=where,
            )
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > max_bytes:
        raise PayloadError(f"{field} takes {size:,} bytes as JSON; at most {max_bytes:,}", field=field)


def _storable(number: int | float) -> bool:
    try:
        _DYNAMODB_NUMBERS.create_decimal(decimal.Decimal(repr(number)) if isinstance(number, float) else number)
    except decimal.DecimalException:
        return False
    return True
