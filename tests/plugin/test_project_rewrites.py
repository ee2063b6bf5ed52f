"""The test projects' own helper: a module rewritten between two runs runs as rewritten.

CI keeps Python's bytecode cache on, and a cached module is trusted while the source's size and
whole-second mtime are unchanged; an edit of the same length inside one second (a failing scenario
fixed by swapping one script for another) once ran the old code in the second run.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.plugin.conftest import Project


def _value(project: Project) -> str:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", "import probe; print(probe.V)"],
        cwd=project.path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_same_length_rewrite_in_the_same_second_is_not_served_from_the_bytecode_cache(project: Project) -> None:
    path = project.write("probe.py", "V = 8\n")
    assert _value(project) == "8"
    assert list((project.path / "__pycache__").glob("probe.*.pyc")), "the first import cached its bytecode"
    stamp = path.stat().st_mtime_ns

    project.write("probe.py", "V = 7\n")
    os.utime(path, ns=(stamp, stamp))  # as if written within the same second as the first
    assert _value(project) == "7"
