"""telecom's own option, declared here and registered as an option section (``--help``: its group).

Imported at every pytest start (the plugin declares every option): it imports nothing of the
domain, only the settings' option types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_tau2.errors import SettingsError
from pytest_tau2.settings import Option, OptionSection, register_option_section

if TYPE_CHECKING:
    from pytest_tau2.settings import Settings

TASK_SETS = ("base", "full")


@dataclass(frozen=True)
class TelecomSettings:
    """The telecom options of a run, typed: ``TELECOM.of(settings)``."""

    tasks: Literal["base", "full"] = "base"
    """The task set: ``base`` (114 tasks) or ``full`` (2,285)."""


def _view(settings: Settings) -> TelecomSettings:
    tasks = settings.option("telecom_tasks")
    if tasks == "base":
        return TelecomSettings("base")
    if tasks == "full":
        return TelecomSettings("full")
    raise SettingsError(f"--tau2-telecom-tasks must be 'base' or 'full', got {tasks!r}")


TELECOM: OptionSection[TelecomSettings] = register_option_section(
    OptionSection(
        "telecom",
        "tau2: telecom domain",
        (
            Option(
                "telecom_tasks",
                "Telecom task set: base (114, default) or full (2,285).",
                "base",
                section="telecom",
                choices=TASK_SETS,
            ),
        ),
        _view,
    )
)
