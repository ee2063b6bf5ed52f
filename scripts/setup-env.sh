# Set-up shared by scripts/sweep.sh and scripts/test.sh; sourced (". scripts/setup-env.sh"), not run.
#
# After sourcing, from the repository root:
#   PY             the Python to use (install into it, run pytest with it)
#   TAU2_DATA_DIR  exported: as given, else ../shared/tau2-data beside the clone when that exists
#
# Which Python:
#   1. an active virtual environment (or conda environment): its python;
#   2. TAU2_VENV=none, or CI set (CI=true: a throw-away machine): python3, else python, as found;
#   3. otherwise the virtual environment TAU2_VENV (default .venv in the clone), created with
#      "python3 -m venv" on first use. Nothing asks questions, so this runs without a terminal.
# Python 3.11 or newer is required; a clear message says what was found otherwise.

tau2_note() { echo "${0##*/}: $*" >&2; }

tau2_find_python() {
  local candidate
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  tau2_note "no Python 3.11 or newer found as python3 or python" \
    "(found: $(python3 --version 2>&1 || true); $(python --version 2>&1 || true))"
  return 1
}

tau2_in_environment() {
  # python3 -m venv / virtualenv set VIRTUAL_ENV on activation; conda sets CONDA_PREFIX.
  [ -n "${VIRTUAL_ENV:-}" ] || [ -n "${CONDA_PREFIX:-}" ]
}

tau2_ci() {
  case "$(echo "${CI:-}" | tr '[:upper:]' '[:lower:]')" in
    "" | 0 | false | no) return 1 ;;
    *) return 0 ;;
  esac
}

tau2_select_python() {
  local venv="${TAU2_VENV:-.venv}" base
  if tau2_in_environment; then
    PY="$(tau2_find_python)" || return 1
    tau2_note "Python: $(command -v "$PY") (the active environment)"
  elif [ "$venv" = none ] || tau2_ci; then
    PY="$(tau2_find_python)" || return 1
    tau2_note "Python: $(command -v "$PY") (no virtual environment: $([ "$venv" = none ] && echo TAU2_VENV=none || echo CI is set))"
  else
    if [ ! -x "$venv/bin/python" ]; then
      base="$(tau2_find_python)" || return 1
      tau2_note "creating the virtual environment $venv with $base -m venv (TAU2_VENV=none: install into $base instead)"
      if ! "$base" -m venv "$venv"; then
        tau2_note "could not create $venv: install the venv module (Debian/Ubuntu: apt install python3-venv)," \
          "activate an environment of your own, or run with TAU2_VENV=none"
        return 1
      fi
    fi
    PY="$venv/bin/python"
    if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      tau2_note "$venv holds $("$PY" --version 2>&1); Python 3.11 or newer is needed: remove $venv and rerun"
      return 1
    fi
    tau2_note "Python: $PY (virtual environment $venv; activate it with: . $venv/bin/activate)"
  fi
}

tau2_select_data_dir() {
  if [ -z "${TAU2_DATA_DIR:-}" ] && [ -d ../shared/tau2-data ]; then
    TAU2_DATA_DIR="$(cd ../shared/tau2-data && pwd)"
    export TAU2_DATA_DIR
  fi
  if [ -n "${TAU2_DATA_DIR:-}" ]; then
    tau2_note "tau2 data: $TAU2_DATA_DIR"
  else
    tau2_note "tau2 data: TAU2_DATA_DIR is not set and ../shared/tau2-data does not exist; the plugin" \
      "looks in its download cache (fill it with: pytest-tau2 data fetch)"
  fi
}

export LITELLM_LOCAL_MODEL_COST_MAP=True
# Python's bytecode cache: on a machine that sets PYTHONDONTWRITEBYTECODE every process (each xdist
# worker, each nested pytest run the suite starts) compiles the package from source again, ~0.75 s of
# CPU each (measured: importing the plugin's run path costs 1.0 s cold, 0.27 s from the cache), and
# pytest rewrites every test module again. The caches go to __pycache__, which git ignores.
unset PYTHONDONTWRITEBYTECODE
tau2_select_python || exit 1
tau2_select_data_dir
