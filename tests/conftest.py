"""Shared test configuration: pytester for the plugin acceptance tests (tests/plugin), and the CI
rule that a test needing the tau2 data fails instead of skipping (tests/support/tau2_data.py)."""

from __future__ import annotations

pytest_plugins = ["pytester", "tests.support.tau2_data"]
