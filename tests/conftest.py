"""Shared test configuration: pytester for the plugin acceptance tests (tests/plugin)."""

from __future__ import annotations

pytest_plugins = ["pytester"]
