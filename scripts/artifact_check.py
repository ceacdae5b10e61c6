"""Would `sam build`'s output load on the declared Lambda platform? Read off the files, no Docker needed.

Every shared object must be an ELF for the target architecture, ask for no newer glibc symbol version
than the runtime's OS has, need only libraries that OS has (or the wheel vendored), and carry the
runtime's CPython ABI; every module must be compiled by the runtime's Python version; the whole must
fit Lambda's unzipped size limit. Each problem names its file, so the offender is obvious.

    python scripts/artifact_check.py [.aws-sam/build]
"""

import email
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lambda_target import MACHINES, ROOT, LambdaTarget, lambda_target  # noqa: E402

BUILD_DIR = ROOT / ".aws-sam" / "build"

# Function code and all its layers, unzipped (Lambda quotas).
UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024

# Libraries a manylinux wheel may link without vendoring them: the PEP 600 policy list (auditwheel's
# policy.json), all present on Amazon Linux 2023. Anything else must sit in the wheel's own `.libs`.
SYSTEM_LIBRARIES = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "libutil.so.1",
    "libnsl.so.1",
    "libresolv.so.2",
    "libgcc_s.so.1",
    "libstdc++.so.6",
    "libcrypt.so.1",
    "libz.so.1",
    "libexpat.so.1",
    "ld-linux-aarch64.so.1",
    "ld-linux-x86-64.so.2",
}

_GLIBC = re.compile(r"^GLIBC_(\d+)\.(\d+)(?:\.\d+)?$")
_CPYTHON_SO = re.compile(r"\.cpython-(\d+)-([a-z0-9_]+)-linux-gnu\.so$")


def elf_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    yield path


def _needs(elf: ELFFile) -> tuple[list[str], list[tuple[str, str]]]:
    """DT_NEEDED libraries, and (library, version) pairs from .gnu.version_r."""
    dynamic = elf.get_section_by_name(".dynamic")
    needed = [tag.needed for tag in dynamic.iter_tags() if tag.entry.d_tag == "DT_NEEDED"] if dynamic else []
    versions: list[tuple[str, str]] = []
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for verneed, auxiliaries in section.iter_versions():
                versions += [(verneed.name, aux.name) for aux in auxiliaries]
    return needed, versions


def elf_problems(path: Path, target: LambdaTarget, vendored: set[str], relative_to: Path) -> list[str]:
    name = path.relative_to(relative_to)
    try:
        with path.open("rb") as handle:
            elf = ELFFile(handle)
            machine, bits = elf["e_machine"], elf.elfclass
            needed, versions = _needs(elf)
    except ELFError as error:
        return [f"{name}: unreadable ELF ({error})"]
    problems = []
    if machine != target.elf_machine or bits != 64:
        problems.append(f"{name}: built for {machine} ({bits}-bit), the runtime is {target.architecture}")
    for library, version in versions:
        match = _GLIBC.match(version)
        if match and (int(match[1]), int(match[2])) > target.max_glibc:
            have = ".".join(map(str, target.max_glibc))
            problems.append(
                f"{name}: needs {version} ({library}); {target.os_name} under {target.runtime} has glibc {have}"
            )
    for library in needed:
        if library not in SYSTEM_LIBRARIES and library not in vendored:
            problems.append(f"{name}: needs {library}, which neither {target.os_name} nor the artifact provides")
    abi = _CPYTHON_SO.search(path.name)
    if abi and abi[1] != target.python_version.replace(".", ""):
        problems.append(f"{name}: compiled for CPython {abi[1]}, the runtime is {target.runtime}")
    if abi and abi[2] != target.machine:
        problems.append(f"{name}: tagged {abi[2]}, the runtime is {target.machine}")
    return problems


def pyc_problems(root: Path, target: LambdaTarget) -> list[str]:
    """A module without a .pyc of the runtime's version is compiled again on every cold start."""
    tag = f"cpython-{target.python_version.replace('.', '')}"
    problems = []
    for source in sorted(root.rglob("agent_workspace/**/*.py")):
        if not (source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc").is_file():
            problems.append(f"{source.relative_to(root)}: no {tag} .pyc beside it")
    return problems


def size_of(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def artifact_problems(build_dir: Path = BUILD_DIR, target: LambdaTarget | None = None) -> list[str]:
    """Everything in the built layer and functions that would keep them from loading on Lambda."""
    target = target or lambda_target()
    layer = build_dir / "WorkspaceLayer"
    functions = [path for path in sorted(build_dir.iterdir()) if path.is_dir() and path != layer]
    files = list(elf_files(build_dir))
    vendored = {path.name for path in files}
    problems = [problem for path in files for problem in elf_problems(path, target, vendored, build_dir)]
    problems += pyc_problems(layer / "python", target)
    for function in functions:
        total = size_of(function) + size_of(layer)
        if total > UNZIPPED_LIMIT_BYTES:
            problems.append(f"{function.name} with its layer is {total:,} bytes unzipped; Lambda allows 250 MB")
    return problems


def _binary_distributions(site: Path) -> list[str]:
    """`name==version` of every installed distribution whose wheel is platform-specific."""
    pins = []
    for wheel in sorted(site.glob("*.dist-info/WHEEL")):
        if "Root-Is-Purelib: false" in wheel.read_text():
            metadata = email.message_from_string((wheel.parent / "METADATA").read_text())
            pins.append(f"{metadata['Name']}=={metadata['Version']}")
    return pins


def loadable_layer(layer: Path, target: LambdaTarget, interpreter: str, scratch: Path) -> Path:
    """The built layer (its `python/` folder) as this host can load it, to import and run the built handlers.

    On a host of the target architecture that is the layer itself. Elsewhere it is a copy under `scratch`
    in which each binary distribution is replaced by the same version's wheel for this host's architecture
    (same runtime Python, same glibc ceiling): every pure-Python file, every .pyc and every version stays
    the one built. The binaries themselves are proven by the ELF check instead.
    """
    machine = platform.machine()
    if machine == target.machine:
        return layer
    if platform.system() != "Linux":
        raise SystemExit("the built artifact can be loaded on Linux hosts only")
    twin = scratch / "python"
    shutil.rmtree(twin, ignore_errors=True)
    shutil.copytree(layer, twin, symlinks=True)
    host = LambdaTarget(target.runtime, next(name for name, (m, _) in MACHINES.items() if m == machine))
    subprocess.run(
        [interpreter, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--root-user-action=ignore",
         "--no-deps", "--upgrade", "--no-compile", "--target", str(twin), "--implementation", "cp",
         "--python-version", target.python_version, *[arg for tag in host.pip_platforms for arg in ("--platform", tag)],
         "--only-binary=:all:", *_binary_distributions(twin)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return twin


if __name__ == "__main__":
    found = artifact_problems(Path(sys.argv[1]) if len(sys.argv) > 1 else BUILD_DIR)
    print("\n".join(found) or "the artifact would load on Lambda")
    sys.exit(1 if found else 0)
