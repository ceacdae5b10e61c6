"""Reads `template.yaml`, so the local stack creates exactly the resources the SAM stack declares."""

from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[4]
TEMPLATE_PATH = REPO_ROOT / "template.yaml"


class _CfnLoader(yaml.SafeLoader):
    """Keeps CloudFormation's short-form intrinsics (`!Ref X`) as `{"Ref": "X"}`-style dicts."""


def _intrinsic(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if tag_suffix == "Ref" else f"Fn::{tag_suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


def resource_properties(template: dict[str, Any], logical_id: str) -> dict[str, Any]:
    return template["Resources"][logical_id].get("Properties", {})
