"""The Lambda platform the stack runs on, read from template.yaml's Globals: the one place it is declared.

The layer build, the artifact check and the README all derive from it, so a runtime bump is one edit
in the template. Run as a script it prints Make variables for the layer build:

    python scripts/lambda_target.py make-vars
"""

import glob
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "workspace"))

from agent_workspace.local.template import load_template  # noqa: E402

# The OS image and its glibc under each Python runtime Lambda offers, from the "Lambda runtimes" table of
# the Lambda developer guide: python3.12 and later run on Amazon Linux 2023, whose glibc is 2.34.
# Amazon Linux 2 (python3.11 and older, glibc 2.26) reached its end of support in June 2026; it stays
# listed so the artifact check can say why a build for it would fail.
RUNTIME_OS: dict[str, tuple[str, tuple[int, int]]] = {
    "python3.10": ("Amazon Linux 2", (2, 26)),
    "python3.11": ("Amazon Linux 2", (2, 26)),
    "python3.12": ("Amazon Linux 2023", (2, 34)),
    "python3.13": ("Amazon Linux 2023", (2, 34)),
    "python3.14": ("Amazon Linux 2023", (2, 34)),
}

# Lambda's architecture names, as machine names (`uname -m`, wheel tags) and ELF e_machine values.
MACHINES = {"arm64": ("aarch64", "EM_AARCH64"), "x86_64": ("x86_64", "EM_X86_64")}

# manylinux_2_17 is the oldest tag aarch64 wheels carry (PEP 599's manylinux2014).
_OLDEST_MANYLINUX_MINOR = 17


@dataclass(frozen=True)
class LambdaTarget:
    runtime: str  # python3.13
    architecture: str  # arm64

    @property
    def python_version(self) -> str:
        return self.runtime.removeprefix("python")

    @property
    def machine(self) -> str:
        return MACHINES[self.architecture][0]

    @property
    def elf_machine(self) -> str:
        return MACHINES[self.architecture][1]

    @property
    def os_name(self) -> str:
        return RUNTIME_OS[self.runtime][0]

    @property
    def max_glibc(self) -> tuple[int, int]:
        return RUNTIME_OS[self.runtime][1]

    @property
    def pip_platforms(self) -> list[str]:
        """Every manylinux tag the runtime's glibc can load, newest first: pip (24) does not expand
        `--platform manylinux_2_34_aarch64` to the older tags by itself."""
        major, newest = self.max_glibc
        tags = [f"manylinux_{major}_{minor}_{self.machine}" for minor in range(newest, _OLDEST_MANYLINUX_MINOR - 1, -1)]
        return [*tags, f"manylinux2014_{self.machine}"]


def lambda_target(template: dict | None = None) -> LambdaTarget:
    """The runtime and architecture every function gets from Globals; the layer must declare the same."""
    template = template or load_template()
    function = template["Globals"]["Function"]
    (architecture,) = function["Architectures"]
    runtime = function["Runtime"]
    if runtime not in RUNTIME_OS:
        raise SystemExit(f"template.yaml: runtime {runtime} is not in RUNTIME_OS of {Path(__file__).name}")
    if architecture not in MACHINES:
        raise SystemExit(f"template.yaml: architecture {architecture} is not one Lambda offers")
    return LambdaTarget(runtime, architecture)


def find_interpreter(version: str) -> str | None:
    """A working `python<version>` on this host: the layer's .pyc must come from the runtime's own version.

    pyenv's shim answers for every installed version but runs only the selected ones, so each candidate
    is tried, and pyenv's install folders are searched too."""
    candidates = [f"python{version}"]
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/{version}*/bin/python{version}"), reverse=True)
    for candidate in candidates:
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and done.stdout.strip() == version:
            return candidate
    return None


def make_vars(target: LambdaTarget) -> str:
    """Shell assignments (`set -a; . file`) the layer's Makefile reads."""
    interpreter = find_interpreter(target.python_version)
    if interpreter is None:
        raise SystemExit(
            f"python{target.python_version} is needed to build the layer (its .pyc are compiled by the runtime's "
            f"own version): install it, e.g. `pyenv install {target.python_version}`, "
            f"`brew install python@{target.python_version}` or `uv python install {target.python_version}`"
        )
    values = {
        "LAMBDA_RUNTIME": target.runtime,
        "LAMBDA_PYTHON": interpreter,
        "LAMBDA_PYTHON_VERSION": target.python_version,
        "LAMBDA_ARCHITECTURE": target.architecture,
        "LAMBDA_PIP_PLATFORMS": " ".join(f"--platform {tag}" for tag in target.pip_platforms),
    }
    return "\n".join(f"{name}={shlex.quote(value)}" for name, value in values.items())


if __name__ == "__main__":
    if sys.argv[1:] != ["make-vars"]:
        raise SystemExit("usage: python scripts/lambda_target.py make-vars")
    print(make_vars(lambda_target()))
