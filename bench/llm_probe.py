"""A ``-p llm_probe`` pytest plugin for bench_llm_latency.py: what each process of a run cost.

At the end of every pytest process of a run (the main process and each xdist worker) it appends
one JSON line to ``$LLM_PROBE_OUT``: peak RSS (``ru_maxrss``), CPU seconds, whether litellm was
imported, and wall-clock marks (process start, collection finished, first test started, last
test finished).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from typing import Any

_MARKS: dict[str, float] = {"configured": time.time()}
HEAVY = ("scipy", "numpy", "pandas", "jinja2", "mcp", "litellm", "jsonschema", "deepdiff", "pydantic_ai", "openai")
"""Packages a run should import only when it uses them (issue 41): recorded if they were."""


def pytest_collection_finish(session: Any) -> None:
    _MARKS.setdefault("collected", time.time())


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _MARKS.setdefault("first_test", time.time())


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _MARKS["last_test"] = time.time()


def pytest_unconfigure(config: Any) -> None:
    out = os.environ.get("LLM_PROBE_OUT")
    if not out:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    scale = 1024.0 if sys.platform != "darwin" else 1024.0 * 1024.0  # ru_maxrss: KiB on Linux, bytes on macOS
    record = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER") or "main",
        "pid": os.getpid(),
        "peak_rss_mb": round(usage.ru_maxrss / scale, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "user_s": round(usage.ru_utime, 2),
        "sys_s": round(usage.ru_stime, 2),
        "litellm_imported": "litellm" in sys.modules,
        "heavy_imported": [name for name in HEAVY if name in sys.modules],
        **{k: round(v, 3) for k, v in _MARKS.items()},
        "unconfigured": round(time.time(), 3),
    }
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
