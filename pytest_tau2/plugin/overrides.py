"""Which scenario items have a participant fixture of their own (a conftest's or test module's
``tau2_agent``, ``tau2_user`` or ``tau2_judge``): ``--tau2-concurrency`` does not start their
conversations early, since only the item's own fixtures can build their participants.

Read from public API only: every plugin module pytest registers (conftest.py files among them)
passes through ``pytest_plugin_registered``; a conftest's fixtures apply to the items under its
folder, and any other plugin's to every item. The item's own module and class are looked at too.
Should a definition still escape this (a fixture made by a factory under another name), the item
sees that its participants are not the trial's and runs its own conversation (plugin/item.py).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

PARTICIPANT_FIXTURES = ("tau2_agent", "tau2_user", "tau2_judge")
_OURS = ("pytest_tau2.plugin.fixtures", "pytest_tau2.plugin.item")
"""The modules that declare or build the built-in fixtures (not overrides)."""


def _defines_one(holder: object) -> bool:
    return any(callable(getattr(holder, name, None)) for name in PARTICIPANT_FIXTURES)


class FixtureOverrides:
    """Registered at configure time; ``pytest_plugin_registered`` is a historic hook, so it also
    hears of the plugins registered before it."""

    def __init__(self) -> None:
        self.folders: list[Path] = []
        """Folders of the conftest.py files that define a participant fixture."""
        self.everywhere = False
        """A plugin that is not a conftest defines one: it applies to every item."""
        self._under: dict[str, bool] = {}
        """Test file -> whether one of :attr:`folders` holds it (asked for every item, often twice)."""
        self.defined: dict[str, list[str]] = {}
        """Fixture name -> the files (conftest.py or plugin modules) that define it, as registered."""

    def pytest_plugin_registered(self, plugin: object) -> None:
        if not isinstance(plugin, ModuleType) or plugin.__name__ in _OURS or not _defines_one(plugin):
            return
        file = getattr(plugin, "__file__", None)
        for name in PARTICIPANT_FIXTURES:
            if callable(getattr(plugin, name, None)):
                self.defined.setdefault(name, []).append(str(file or plugin.__name__))
        if file is not None and Path(file).name == "conftest.py":
            self.folders.append(Path(file).resolve().parent)
            self._under.clear()
        else:
            self.everywhere = True

    def overridden(self, item: pytest.Item) -> bool:
        """Whether ``item`` may get a participant from a fixture other than the built-in ones."""
        if self.everywhere:
            return True
        for holder in (getattr(item, "module", None), getattr(item, "cls", None)):
            if holder is not None and getattr(holder, "__name__", None) not in _OURS and _defines_one(holder):
                return True
        key = str(item.path)
        under = self._under.get(key)
        if under is None:
            path = Path(key).resolve()
            under = self._under[key] = any(path.is_relative_to(folder) for folder in self.folders)
        return under
