"""scripts/setup-env.sh: which Python the README's two commands use, and where the tau2 data is.

The script is sourced by scripts/sweep.sh and scripts/test.sh. Each case sources it in a
bash whose PATH holds only the programs the case allows (``python3`` but no ``python``, a
Python that is too old, ...), from a copy of the clone's ``scripts/`` in a temporary folder
that may or may not have ``../shared/tau2-data`` beside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash") or "/bin/bash"
REPORT = 'echo "PY=$PY"; echo "TAU2_DATA_DIR=${TAU2_DATA_DIR:-}"; "$PY" -c "import sys; print(sys.prefix)"'


def _clone(tmp_path: Path, *, shared_data: bool) -> Path:
    clone = tmp_path / "work" / "pytest-tau2"
    (clone / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup-env.sh", clone / "scripts" / "setup-env.sh")
    if shared_data:
        (tmp_path / "work" / "shared" / "tau2-data" / "tau2" / "domains").mkdir(parents=True)
    return clone


def _bin(tmp_path: Path, **programs: str) -> Path:
    """A folder of programs: name -> target path (a symlink), or a shell script body if it starts with '#!'."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in ("tr",):  # the script's one non-builtin helper
        (folder / name).symlink_to(shutil.which(name) or f"/usr/bin/{name}")
    for name, target in programs.items():
        path = folder / name
        if target.startswith("#!"):
            path.write_text(target, "utf-8")
            path.chmod(0o755)
        else:
            path.symlink_to(target)
    return folder


def _source(clone: Path, path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": str(path), "HOME": str(clone.parent), "LANG": "C.UTF-8"}
    return subprocess.run(
        [BASH, "-c", f'set -euo pipefail; cd "{clone}"; . scripts/setup-env.sh; {REPORT}'],
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _values(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    values = dict(line.split("=", 1) for line in lines[:2])
    values["prefix"] = lines[2]
    return values


def test_python3_is_used_when_python_is_absent_and_ci_skips_the_venv(tmp_path: Path) -> None:
    clone = _clone(tmp_path, shared_data=True)
    done = _source(clone, _bin(tmp_path, python3=sys.executable), CI="true")
    values = _values(done)
    assert values["PY"] == "python3"
    assert values["TAU2_DATA_DIR"] == str(tmp_path / "work" / "shared" / "tau2-data")
    assert "(no virtual environment: CI is set)" in done.stderr
    assert not (clone / ".venv").exists()


def test_without_an_environment_a_venv_is_created_and_reused(tmp_path: Path) -> None:
    clone = _clone(tmp_path, shared_data=False)
    path = _bin(tmp_path, python3=sys.executable)
    first = _source(clone, path)
    values = _values(first)
    assert values["PY"] == ".venv/bin/python"
    assert values["prefix"] == str(clone / ".venv")
    assert "creating the virtual environment .venv with python3 -m venv" in first.stderr
    assert "TAU2_DATA_DIR is not set and ../shared/tau2-data does not exist" in first.stderr
    assert values["TAU2_DATA_DIR"] == ""
    again = _source(clone, path)
    assert _values(again)["PY"] == ".venv/bin/python" and "creating" not in again.stderr


def test_an_active_environment_is_used_as_is(tmp_path: Path) -> None:
    clone = _clone(tmp_path, shared_data=True)
    done = _source(clone, _bin(tmp_path, python=sys.executable), VIRTUAL_ENV=sys.prefix, TAU2_DATA_DIR="/data/given")
    values = _values(done)
    assert values["PY"] == "python" and values["TAU2_DATA_DIR"] == "/data/given"
    assert "(the active environment)" in done.stderr and not (clone / ".venv").exists()


def test_tau2_venv_none_installs_into_the_found_python(tmp_path: Path) -> None:
    clone = _clone(tmp_path, shared_data=True)
    done = _source(clone, _bin(tmp_path, python3=sys.executable), TAU2_VENV="none")
    assert _values(done)["PY"] == "python3" and "TAU2_VENV=none" in done.stderr


def test_a_python_older_than_3_11_is_refused_with_what_was_found(tmp_path: Path) -> None:
    clone = _clone(tmp_path, shared_data=True)
    old = "#!/bin/sh\ncase \"$1\" in --version) echo 'Python 3.8.10';; *) exit 1;; esac\n"
    done = _source(clone, _bin(tmp_path, python3=old), CI="true")
    assert done.returncode == 1
    assert "no Python 3.11 or newer found as python3 or python (found: Python 3.8.10;" in done.stderr


@pytest.mark.parametrize("script", ["sweep.sh", "test.sh"])
def test_both_commands_source_the_setup_and_use_its_python(script: str) -> None:
    text = (REPO / "scripts" / script).read_text("utf-8")
    assert ". scripts/setup-env.sh" in text
    commands = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert not [line for line in commands if line.startswith(("python ", "python3 "))], "use $PY, not a bare python"
    assert any(line.startswith('"$PY" -m pytest') for line in commands)


def test_ci_entry_point_sets_ci_and_runs_the_test_command_without_stdin() -> None:
    text = (REPO / ".ci" / "run").read_text("utf-8")
    assert 'export CI="${CI:-true}"' in text
    assert "bash scripts/test.sh < /dev/null" in text
    assert os.access(REPO / ".ci" / "run", os.X_OK)
