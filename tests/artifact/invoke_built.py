"""Run inside a clean interpreter (`python3.13 -I -S`): load a built function the way Lambda does and answer events.

sys.path holds the standard library, the function's folder and the layer's `python/` folder and nothing
else, as on Lambda (the runtime puts /var/task and /opt/python there). Reads one JSON event per line on
stdin, writes one JSON line per event on stdout: {"response": ...} or {"error": traceback}. The last line
out describes the interpreter: its sys.path and where every third-party module it loaded came from.

    python3.13 -I -S invoke_built.py <function dir> <layer python dir> <function name>
"""

import json
import resource
import sys
import traceback
import uuid

function_dir, layer_dir, function_name = sys.argv[1:4]
stdlib = [entry for entry in sys.path if entry.startswith(sys.base_prefix)]
sys.path[:] = [function_dir, layer_dir, *stdlib]


class Context:
    """What the Lambda runtime hands the handler with each invocation."""

    def __init__(self) -> None:
        self.function_name = function_name
        self.function_version = "1"
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}:live"
        self.memory_limit_in_mb = 512
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "2026/12/03/[1]0123456789abcdef0123456789abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # the functions' JSON logs go to stderr; stdout carries only answers
    import app  # the function's module, as the runtime imports `app.handler`

    for line in sys.stdin:
        try:
            answer = {"response": app.handler(json.loads(line), Context())}
        except Exception:  # noqa: BLE001 - reported to the test, which fails on it
            answer = {"error": traceback.format_exc()}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    top_level = {name: getattr(module, "__file__", None) for name, module in list(sys.modules.items())}
    origins = {
        name: origin
        for name, origin in top_level.items()
        if origin and origin != __file__ and "." not in name and not origin.startswith(sys.base_prefix)
    }
    out.write(
        json.dumps(
            {
                "sys_path": sys.path,
                "base_prefix": sys.base_prefix,
                "origins": origins,
                "peak_rss_mb": _peak_rss_mb(),
            }
        )
        + "\n"
    )


def _peak_rss_mb() -> float:
    """This program's own peak. Not getrusage's ru_maxrss: Linux carries that over `exec` from the process
    that forked it, so a child of a large test worker would report the worker's size. VmHWM belongs to the
    address space `exec` made."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc: the best there is


main()
