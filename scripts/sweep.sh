#!/usr/bin/env bash
# The main job: installs the project, then runs every registered scenario offline
# (oracle agent, scripted user) as a parallel pytest sweep with a JUnit report.
set -euo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
if [ -z "${TAU2_DATA_DIR:-}" ] && [ -d ../shared/tau2-data ]; then
  TAU2_DATA_DIR="$(cd ../shared/tau2-data && pwd)"
  export TAU2_DATA_DIR
fi
python -m pip install --quiet --disable-pip-version-check -e .
python -m pytest -n 2 -q --junitxml=tau2-results/junit.xml "$@"
