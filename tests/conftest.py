"""Shared test configuration: pytester for the plugin acceptance tests (tests/plugin), and the CI
rule that a test needing the tau2 data fails instead of skipping (tests/support/tau2_data.py)."""

from __future__ import annotations

pytest_plugins = ["pytester", "tests.support.tau2_data"]

# numpy's C extension loads once per process, and pytester's in-process runs drop the modules
# they imported when they end: the first inline run whose run end computes an interval would
# import numpy, and the next one fail with "cannot load module more than once per process".
# Importing them here puts them in the snapshot pytester restores. (The plugin itself imports
# them only when an interval is computed: tests/unit/test_startup_imports.py, in a subprocess.)
import numpy  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401
