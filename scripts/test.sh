#!/usr/bin/env bash
# The test command: installs the project with its test extras, then runs the test suite.
# Python, virtual environment and tau2 data folder: see scripts/setup-env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup-env.sh
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[test]"
bash scripts/install-browser.sh  # headless Chromium for the HTML report tests (apt-get, as root)
bash scripts/install-sandbox.sh  # bubblewrap + ripgrep for banking's terminal_use shell (apt-get, as root)
bash scripts/install-speech.sh  # espeak-ng for the phone-call tests (--tau2-speech-complexity; apt-get, as root)
"$PY" -m pytest tests -n 2 -q "$@"
