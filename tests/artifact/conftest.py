"""The artifact `sam build` produces (`make build`), built afresh when a source is newer than it."""

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from artifact_check import BUILD_DIR  # noqa: E402
from artifact_check import loadable_layer as loadable  # noqa: E402
from lambda_target import LambdaTarget, find_interpreter, lambda_target  # noqa: E402

SOURCES = [ROOT / "template.yaml", ROOT / "scripts" / "lambda_target.py", ROOT / "layers", ROOT / "functions"]


def _newest(paths: list[Path]) -> float:
    files = [p for path in paths for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()]
    return max(p.stat().st_mtime for p in files if "__pycache__" not in p.parts)


@dataclass(frozen=True)
class Built:
    root: Path
    target: LambdaTarget
    interpreter: str  # this host's python of the runtime's version

    def function(self, logical_id: str) -> Path:
        return self.root / logical_id

    @property
    def layer(self) -> Path:
        return self.root / "WorkspaceLayer" / "python"


@pytest.fixture(scope="session")
def built() -> Built:
    stamp = BUILD_DIR / "template.yaml"
    if not stamp.is_file() or stamp.stat().st_mtime < _newest(SOURCES):
        subprocess.run(["make", "build"], cwd=ROOT, check=True, capture_output=True, timeout=900)
    target = lambda_target()
    interpreter = find_interpreter(target.python_version)
    assert interpreter, f"python{target.python_version} is needed on this host to load the built artifact"
    return Built(BUILD_DIR, target, interpreter)


@pytest.fixture(scope="session")
def loadable_layer(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built layer as this host can load it (artifact_check.loadable_layer says how)."""
    return loadable(built.layer, built.target, built.interpreter, tmp_path_factory.mktemp("layer"))
