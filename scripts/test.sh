#!/usr/bin/env bash
# The test command: installs the project with its test extras, then runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
python -m pip install --quiet --disable-pip-version-check -e ".[test]"
python -m pytest tests -n 2 -q "$@"
