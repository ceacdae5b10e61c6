"""The reference parts of docs/ are generated from the code; a committed copy that lags behind fails here.

After an intended change to the tools, the REST routes, the settings or template.yaml's environment,
run `make docs` and commit what it rewrites.
"""

import importlib.util
import shutil
from pathlib import Path

import pytest

from tests.support import ROOT


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_docs = _load_generator()
FILES = ["docs/configuration.md", "docs/openapi.json", "docs/rest-api.md", "docs/tools.md"]


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return gen_docs.generated(ROOT)


def test_every_reference_file_is_generated(generated):
    assert sorted(generated) == FILES


@pytest.mark.parametrize("path", FILES)
def test_committed_file_matches_what_the_code_generates(generated, path):
    committed = (ROOT / path).read_text(encoding="utf-8")
    assert committed == generated[path], f"{path} is out of date: run `make docs` and commit the result"


def _copy_of_the_repo(tmp_path: Path) -> Path:
    """What the generator reads: the docs with their prose, and template.yaml."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "template.yaml", tmp_path / "template.yaml")
    return tmp_path


def test_check_names_a_file_whose_generated_part_was_edited_by_hand(tmp_path):
    root = _copy_of_the_repo(tmp_path)
    tools = root / "docs" / "tools.md"
    text = tools.read_text(encoding="utf-8")
    assert "| `createTask` | `task` | `create` |" in text
    tools.write_text(text.replace("| `createTask` | `task` | `create` |", "| `createTask` | `task` | `get` |"))

    assert gen_docs.stale(root) == ["docs/tools.md"]
    assert gen_docs.write(root) == ["docs/tools.md"]
    assert gen_docs.stale(root) == []


def test_check_accepts_hand_prose_outside_the_markers_and_flags_a_missing_openapi(tmp_path):
    root = _copy_of_the_repo(tmp_path)
    configuration = root / "docs" / "configuration.md"
    configuration.write_text(configuration.read_text(encoding="utf-8") + "\nA hand-written closing note.\n")
    (root / "docs" / "openapi.json").unlink()

    assert gen_docs.stale(root) == ["docs/openapi.json"]


def test_generator_refuses_a_file_that_lost_its_markers(tmp_path):
    root = _copy_of_the_repo(tmp_path)
    rest = root / "docs" / "rest-api.md"
    rest.write_text(rest.read_text(encoding="utf-8").replace(gen_docs.END, ""))

    with pytest.raises(gen_docs.MarkersMissing, match="docs/rest-api.md"):
        gen_docs.stale(root)


def test_check_exits_1_naming_the_stale_file_and_make_docs(tmp_path, monkeypatch, capsys):
    root = _copy_of_the_repo(tmp_path)
    (root / "docs" / "openapi.json").write_text("{}\n")
    monkeypatch.setattr(gen_docs, "ROOT", root)

    assert gen_docs.main(["--check"]) == 1
    assert "docs/openapi.json is out of date: run `make docs`" in capsys.readouterr().err
