"""The ``--tau2-*`` options (declared once, in settings.OPTIONS) and the markers: read at every pytest
start, so this module imports no engine module (the run header: plugin/run_state.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from pytest_tau2.settings import OPTIONS, SECTIONS, Option, option_sections

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
    """Every option in its section's ``--help`` group: the core's (settings.SECTIONS), then each
    section a domain registered (settings.option_sections: banking_knowledge's, telecom's)."""
    groups = [(f"tau2-{name}", title, [o for o in OPTIONS if o.section == name]) for name, title in SECTIONS.items()]
    groups += [(f"tau2-{section.name}", section.title, list(section.options)) for section in option_sections()]
    for name, title, options in groups:
        group = parser.getgroup(name, title)
        for option in options:
            add_option(parser, group, option)


def add_option(parser: pytest.Parser, group: pytest.OptionGroup, option: Option) -> None:
    """One option: its flag in ``group`` (a fixed set's values checked by argparse) and its ini key."""
    dest = f"tau2_{option.name}"
    checked: dict[str, object] = {"type": _one_of(option)} if option.choices else {}
    if option.kind == "bool":
        group.addoption(option.flag, action="store_true", default=None, dest=dest, help=option.help)
        parser.addini(option.ini, option.help, type="bool", default=False)
    elif option.repeatable:  # a list: repeated flags accumulate, settings.coerce joins them with commas
        group.addoption(option.flag, action="append", default=None, dest=dest, help=option.help, **checked)
        parser.addini(option.ini, option.help, default=None)
    else:
        group.addoption(option.flag, default=None, dest=dest, help=option.help, **checked)
        parser.addini(option.ini, option.help, default=None)


def _one_of(option: Option) -> Callable[[str], str]:
    """argparse's check of a fixed set, with the message an ini or environment value gets."""

    def check(value: str) -> str:
        if value not in option.choices:
            raise argparse.ArgumentTypeError(
                f"{option.flag} (ini {option.ini}) must be one of {', '.join(option.choices)}, got {value!r}"
            )
        return value

    return check


def add_markers(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
