"""A build step of the layer (its Makefile runs it): botocore's data cut down to the services the functions call.

botocore ships the models of every AWS service (~460, 23 MB) and, in endpoints.json, every service's endpoints in
every partition (1.25 MB). Making the first client lists every model directory (~2,900 `stat` calls) and parses all
of endpoints.json (~20 ms of each function's cold start on python3.13, measured on the built layer). The layer
keeps the models of the services store/clients.py makes clients of (read from its `_client("…")` calls, so a
client added there is kept with no other list to update) and of those named (a library's own clients), and in
endpoints.json those services' entries (by their endpoint prefix: sesv2 is `email`) with every partition's own
data, so what botocore resolves for them is unchanged.

    python slim_botocore.py <layer>/python/botocore/data agent_workspace/store/clients.py [SERVICE...]
"""

import gzip
import json
import re
import shutil
import sys
from pathlib import Path

_CLIENT_CALL = re.compile(r'_client\("([a-z0-9-]+)"')


def clients_made(source: Path) -> set[str]:
    """The services `source` (store/clients.py) makes clients of; none found is a build error, not an empty layer."""
    found = set(_CLIENT_CALL.findall(source.read_text(encoding="utf-8")))
    if not found:
        raise SystemExit(f"{source} makes no client: nothing says which botocore models the layer needs")
    return found


def endpoint_prefix(service: Path) -> str:
    """The endpoint prefix in the newest model of the service at `service` (botocore reads the newest too)."""
    newest = max(path for path in service.iterdir() if path.is_dir())
    packed = newest / "service-2.json.gz"
    text = gzip.decompress(packed.read_bytes()) if packed.exists() else (newest / "service-2.json").read_bytes()
    return str(json.loads(text)["metadata"]["endpointPrefix"])


def slim(data: Path, services: set[str]) -> None:
    present = {path.name for path in data.iterdir() if path.is_dir()}
    missing = services - present
    if missing:
        raise SystemExit(f"botocore has no model of {', '.join(sorted(missing))}")
    for name in present - services:
        shutil.rmtree(data / name)
    prefixes = {endpoint_prefix(data / name) for name in services}
    endpoints = json.loads((data / "endpoints.json").read_text(encoding="utf-8"))
    for partition in endpoints["partitions"]:
        partition["services"] = {name: entry for name, entry in partition["services"].items() if name in prefixes}
    (data / "endpoints.json").write_text(json.dumps(endpoints, separators=(",", ":")), encoding="utf-8")


if __name__ == "__main__":
    slim(Path(sys.argv[1]), clients_made(Path(sys.argv[2])) | set(sys.argv[3:]))
