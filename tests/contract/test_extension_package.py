"""The Chrome extension as shipped: `make extension`'s zip loads as an unpacked extension would.

Chrome refuses a package whose manifest names a missing file, and the store refuses one whose manifest is not at
the zip's root; both are checked here without a browser (tests/e2e/test_extension.py loads the folder itself)."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support import ROOT

EXTENSION = ROOT / "extension"


def manifest() -> dict:
    return json.loads((EXTENSION / "manifest.json").read_text())


def named_files(m: dict) -> set[str]:
    """Every file the manifest refers to."""
    named = {m["background"]["service_worker"], m["action"]["default_popup"]}
    named |= set(m["icons"].values()) | set(m["action"]["default_icon"].values())
    for script in m["content_scripts"]:
        named |= set(script["js"])
    return named


def test_the_manifest_is_v3_with_the_documented_permissions_and_every_file_it_names_exists():
    m = manifest()
    assert m["manifest_version"] == 3
    assert sorted(m["permissions"]) == ["alarms", "scripting", "storage"]
    assert m["host_permissions"] == ["<all_urls>"]
    assert m["background"]["type"] == "module"
    assert "externally_connectable" not in m  # web pages cannot message the extension
    assert [s["world"] for s in m["content_scripts"]] == ["MAIN"]
    missing = sorted(name for name in named_files(m) if not (EXTENSION / name).is_file())
    assert missing == []


def test_make_extension_zips_the_folder_with_the_manifest_at_the_root(tmp_path):
    done = subprocess.run(
        ["make", "-s", "extension", f"PYTHON={sys.executable}"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    built = ROOT / "dist" / f"agent-workspace-extension-{manifest()['version']}.zip"
    with zipfile.ZipFile(built) as archive:
        names = set(archive.namelist())
        assert json.loads(archive.read("manifest.json")) == manifest()
    shipped = {p.relative_to(EXTENSION).as_posix() for p in EXTENSION.rglob("*") if p.is_file()}
    assert names == shipped - {"README.md"}
    assert named_files(manifest()) <= names
    assert all(not Path(name).is_absolute() and ".." not in Path(name).parts for name in names)
