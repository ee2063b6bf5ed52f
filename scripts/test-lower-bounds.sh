#!/usr/bin/env bash
# The lower-bound job: the compat contract and a smoke selection at the LOWEST versions pyproject.toml
# allows of pytest, pytest-xdist and litellm (the three whose internals the compat_* modules use).
#
# It makes a virtual environment (TAU2_LOWER_VENV, default .venv-lower-bounds) that sees the
# packages of the Python scripts/setup-env.sh picks (run scripts/test.sh first: it installs them)
# and installs only the three pinned at their lower bounds on top. Needs PyPI (or a mirror) for
# those three the first time; later runs reuse the environment. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
venv="${TAU2_LOWER_VENV:-.venv-lower-bounds}"

# pytest==9.0 pytest-xdist==3.6.1 litellm==1.60: each ">=X" of pyproject.toml's dependencies as "==X".
mapfile -t pins < <("$PY" - <<'PY'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
for dep in deps:
    name, lower = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)", dep).groups()
    if name in ("pytest", "pytest-xdist", "litellm"):
        print(f"{name}=={lower}")
PY
)
[ "${#pins[@]}" -eq 3 ] || { tau2_note "pyproject.toml: expected lower bounds on pytest, pytest-xdist and litellm, found: ${pins[*]:-none}"; exit 1; }

if ! "$PY" -c 'import importlib.metadata as m; m.distribution("pytest-tau2")' 2>/dev/null; then
  tau2_note "$PY has no pytest-tau2 installed: run scripts/test.sh first (it installs the project and its dependencies)"
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  tau2_note "creating $venv (the lower-bound environment)"
  "$PY" -m venv "$venv" || { tau2_note "could not create $venv with $PY -m venv (Debian/Ubuntu: apt install python3-venv)"; exit 1; }
  # Everything but the three pins comes from $PY's environment: a .pth file puts its site-packages
  # after the venv's own, so the pinned versions installed here win.
  "$PY" -c 'import site, sysconfig; print("\n".join(dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()])))' \
    > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/tau2-parent-site.pth"
fi
VPY="$venv/bin/python"
tau2_note "installing ${pins[*]} into $venv"
"$VPY" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
"$VPY" -m pip check >/dev/null 2>&1 || tau2_note "pip check reports conflicts at the lower bounds (shown by: $VPY -m pip check)"
"$VPY" - <<'PY'
from importlib.metadata import version
print("lower bounds:", ", ".join(f"{name} {version(name)}" for name in ("pytest", "pytest-xdist", "litellm", "execnet")))
PY

# The checkout's code, whatever pytest-tau2 the parent environment has installed.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
"$VPY" -m pytest -q -p no:cacheprovider -n 2 \
  tests/unit/test_compat_contract.py \
  tests/unit/test_worker_schedule.py \
  tests/unit/test_prefetch_order.py \
  tests/unit/test_llm_transport.py \
  tests/unit/test_llm_client.py \
  tests/unit/test_junit_shape.py \
  "tests/plugin/test_regression_gate.py::test_intervals_reach_the_summary_all_metrics_and_junit" \
  tests/plugin/test_xdist.py \
  tests/plugin/test_concurrency_overrides.py \
  "$@"
