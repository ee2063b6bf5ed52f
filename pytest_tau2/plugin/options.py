"""The ``--tau2-*`` options (declared once, in settings.OPTIONS), the markers, and the run header."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tau2.plugin.keys import FOLDER_NOTES_KEY, SETTINGS_KEY
from pytest_tau2.run.session import header_lines
from pytest_tau2.settings import OPTIONS

MARKERS = {
    "tau2": "a pytest-tau2 evaluation scenario",
    "tau2_split_train": "tau2 task in the upstream train split",
    "tau2_split_test": "tau2 task in the upstream test split",
    "tau2_telecom_full": "telecom task outside the base split (collected with --tau2-telecom-tasks full)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tau2", "pytest-tau2 agent evaluation")
    for option in OPTIONS:
        if option.kind == "bool":
            group.addoption(
                option.flag, action="store_true", default=None, dest=f"tau2_{option.name}", help=option.help
            )
            parser.addini(option.ini, option.help, type="bool", default=False)
        else:
            group.addoption(option.flag, default=None, dest=f"tau2_{option.name}", help=option.help)
            parser.addini(option.ini, option.help, default=None)


def add_markers(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    from pytest_tau2.plugin.item import OVERRIDES_KEY

    overrides = config.stash.get(OVERRIDES_KEY, None)
    defined = overrides.defined if overrides is not None else {}
    fixtures = {name: [_shown_path(config, f) for f in files] for name, files in defined.items()}
    notes: list[str] = config.stash.get(FOLDER_NOTES_KEY, [])
    return header_lines(config.stash[SETTINGS_KEY], fixtures=fixtures, notes=notes)


def _shown_path(config: pytest.Config, file: str) -> str:
    try:
        return Path(file).resolve().relative_to(config.rootpath).as_posix()
    except ValueError:
        return file
