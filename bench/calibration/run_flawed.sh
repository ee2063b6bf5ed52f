#!/bin/sh
# Three real offline runs of the flawed oracle over tau2 retail, 114 tasks x 4 trials (bench/bench_calibration.py reads them).
#   sh bench/calibration/run_flawed.sh OUT_DIR
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-/tmp/tau2-calibration}
export PYTHONPATH="$REPO:$REPO/bench/calibration:$PYTHONPATH"
for spec in "a-flaw10-seed1 0.1:1" "b-flaw30-seed2 0.3:2" "c-flaw10-seed3 0.1:3"; do
  set -- $spec
  rm -rf "$OUT/$1"
  python -m pytest -p flawed_agent -p no:cacheprovider -q --no-header --rootdir="$REPO" "$REPO/scenarios" \
    -k tau2_retail --tau2-agent "flawed:$2" --tau2-trials 4 --tau2-results-dir "$OUT/$1" > "$OUT.$1.log" 2>&1 || true
done
