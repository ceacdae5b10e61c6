"""The runtime dependency list keeps the pins the stack needs (one list: layers/workspace/requirements.txt)."""

from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

REQUIREMENTS = Path(__file__).resolve().parents[2] / "layers" / "workspace" / "requirements.txt"


def _requirements() -> dict[str, Requirement]:
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines()]
    return {(r := Requirement(line)).name.lower(): r for line in lines if line}


def test_python_dateutil_stays_below_3_where_croniter_would_pull_4():
    spec = _requirements()["python-dateutil"].specifier
    assert "3.0" not in spec and "4.0.0" not in spec and "2.9.0" in spec
    assert int(version("python-dateutil").split(".")[0]) < 3


def test_aws_sam_cli_is_not_a_runtime_dependency():
    assert "aws-sam-cli" not in _requirements()


def test_mcp_is_pinned_to_the_2_3_line_the_server_is_built_on():
    spec = _requirements()["mcp"].specifier
    assert version("mcp") in spec
    assert "2.3.0" in spec and "2.4.0" not in spec
