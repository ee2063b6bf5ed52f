#!/usr/bin/env bash
# The test command: installs the project with its test extras, runs the gates (ruff, mypy), then the test suite.
# Python, virtual environment and tau2 data folder: see scripts/setup-env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[test]"

# The gates, before the tests (fast failure): lint, formatting, types; any finding fails the command.
# TAU2_GATES=0 skips them for a quick local run (CI never sets it).
tau2_gate() {
  local what="$1"
  shift
  tau2_note "gate: $what"
  if ! "$@"; then
    tau2_note "FAILED gate: $what found problems (listed above); fix them, then rerun. Alone: $*"
    exit 1
  fi
}
if [ "${TAU2_GATES:-1}" != 0 ]; then
  tau2_gate "ruff check" "$PY" -m ruff check .
  tau2_gate "ruff format --check" "$PY" -m ruff format --check .
  tau2_gate "mypy --strict pytest_tau2" "$PY" -m mypy --strict pytest_tau2
fi

bash scripts/install-browser.sh  # headless Chromium for the HTML report tests (apt-get, as root)
bash scripts/install-sandbox.sh  # bubblewrap + ripgrep for banking's terminal_use shell (apt-get, as root)
bash scripts/install-speech.sh  # espeak-ng for the phone-call tests (--tau2-speech-complexity; apt-get, as root)
# Bytecode for the package, the tests and the scenarios, made once before the workers start (each
# xdist worker and nested run would otherwise race to write the same files).
# A checkout Python cannot write to (read-only) runs without them, as Python itself would.
"$PY" -m compileall -q -j 0 pytest_tau2 tests scenarios bench >/dev/null 2>&1 \
  || tau2_note "bytecode caches not written (a read-only checkout?): the suite runs without them, slower"
"$PY" -m pytest tests -n 2 -q "$@"
