"""The artifact `sam build` produces (`make build`), built afresh when a source is newer than it."""

import email
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from artifact_check import BUILD_DIR  # noqa: E402
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


def _binary_distributions(site: Path) -> list[str]:
    """`name==version` of every installed distribution whose wheel is platform-specific."""
    pins = []
    for wheel in sorted(site.glob("*.dist-info/WHEEL")):
        if "Root-Is-Purelib: false" in wheel.read_text():
            metadata = email.message_from_string((wheel.parent / "METADATA").read_text())
            pins.append(f"{metadata['Name']}=={metadata['Version']}")
    return pins


@pytest.fixture(scope="session")
def loadable_layer(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built layer as this host can load it.

    On a host of the target architecture that is the layer itself. Elsewhere it is a copy in which each
    binary distribution is replaced by the same version's wheel for this host's architecture (same runtime
    Python, same glibc ceiling): every pure-Python file, every .pyc and every version stays the one built.
    The binaries themselves are proven by the ELF check instead.
    """
    if platform.machine() == built.target.machine:
        return built.layer
    assert platform.system() == "Linux", "the built artifact can be loaded on Linux hosts only"
    twin = tmp_path_factory.mktemp("layer") / "python"
    shutil.copytree(built.layer, twin, symlinks=True)
    host = LambdaTarget(built.target.runtime, "x86_64" if platform.machine() == "x86_64" else "arm64")
    pins = _binary_distributions(twin)
    assert pins, "the layer should hold binary distributions (pydantic-core at least)"
    subprocess.run(
        [built.interpreter, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--root-user-action=ignore", "--no-deps", "--upgrade", "--no-compile", "--target", str(twin),
         "--implementation", "cp", "--python-version", built.target.python_version,
         *[arg for tag in host.pip_platforms for arg in ("--platform", tag)], "--only-binary=:all:", *pins],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return twin
