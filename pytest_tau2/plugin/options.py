"""The ``--tau2-*`` options (declared once, in settings.OPTIONS) and the markers: read at every pytest
start, so this module imports no engine module (the run header: plugin/run_state.py)."""

from __future__ import annotations

import pytest

from pytest_tau2.settings import OPTIONS

MARKERS = {
    "tau2": "a pytest-tau2 evaluation scenario",
    "tau2_split_train": "tau2 task in the upstream train split",
    "tau2_split_test": "tau2 task in the upstream test split",
    "tau2_telecom_full": "telecom task outside the base split (collected with --tau2-telecom-tasks full)",
    "tau2_gold_incomplete": (
        "tau2 task whose gold actions do not reach its own success criteria (upstream scores its gold "
        "trajectory 0.0; the offline oracle cannot pass it; the main job deselects it)"
    ),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tau2", "pytest-tau2 agent evaluation")
    for option in OPTIONS:
        if option.kind == "bool":
            group.addoption(
                option.flag, action="store_true", default=None, dest=f"tau2_{option.name}", help=option.help
            )
            parser.addini(option.ini, option.help, type="bool", default=False)
        elif option.repeatable:  # settings.coerce joins the values with commas
            group.addoption(option.flag, action="append", default=None, dest=f"tau2_{option.name}", help=option.help)
            parser.addini(option.ini, option.help, default=None)
        else:
            group.addoption(option.flag, default=None, dest=f"tau2_{option.name}", help=option.help)
            parser.addini(option.ini, option.help, default=None)


def add_markers(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
