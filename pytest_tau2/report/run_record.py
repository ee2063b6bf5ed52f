"""The run-level result files as models: all_metrics.json (:class:`RunMetrics`) and run.json
(:class:`RunInfo`), read and written through :mod:`pytest_tau2.report.record`'s conventions:
lenient reading (defaults, unknown keys kept), documents dumped with only the keys that were set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import model_validator

from pytest_tau2.report.record import Part, ScenarioRecord

RUN_FILE = "run.json"
LOCK_FILE = ".tau2.lock"
"""Held (``flock``) by the process that owns a results folder while its run writes (run/run_folder.py)."""
PARTICIPANT_KEYS = ("agent", "user")
"""Fingerprint keys whose values the run's results name (a conftest's agent is known only then)."""


class ErrorEntry(Part):
    """An item that ended without a result (``errors_without_result``): bad data, a crashed worker..."""

    scenario: str
    """Its result folder name (the scenario's, or ``<name>-t<k>``)."""
    nodeid: str | None = None
    reason: str = ""

    @model_validator(mode="before")
    @classmethod
    def _other_spellings(cls, data: object) -> object:
        """A bare name, or the ``name`` / ``error`` / ``message`` spellings of hand-made files."""
        if not isinstance(data, Mapping):
            return {"scenario": str(data)}
        if isinstance(data, Mapping) and not data.get("scenario"):
            name = data.get("name") or data.get("nodeid") or "?"
            return {**data, "scenario": str(name)}
        return data

    @property
    def why(self) -> str:
        """The reason, under whichever key the file used."""
        extra = self.model_extra or {}
        return str(self.reason or extra.get("error") or extra.get("message") or "")


class RunMetrics(Part):
    """all_metrics.json: every result of the run, the items without one, and pass^k."""

    scenarios: list[ScenarioRecord] = []
    errors_without_result: list[ErrorEntry] = []
    pass_hat_k: dict[str, Any] | None = None
    """The pass^k block (:func:`pytest_tau2.report.leaderboard.pass_hat_k_document`)."""

    @classmethod
    def read(cls, data: Any, parse: Callable[[Any, int], ScenarioRecord] | None = None) -> RunMetrics:
        """The file's object as a model; each scenario read by ``parse(item, index)`` (default:
        :meth:`ScenarioRecord.read`). A TypeError when it is not an object with a scenarios list."""
        if not isinstance(data, Mapping):
            raise TypeError(f"expected an object, found {type(data).__name__}")
        scenarios = data.get("scenarios", [])
        if not isinstance(scenarios, list):
            raise TypeError("'scenarios' is not a list")
        read_one = parse or (lambda item, _: ScenarioRecord.read(item))
        return cls.model_validate({**data, "scenarios": [read_one(item, i) for i, item in enumerate(scenarios)]})

    @classmethod
    def of(
        cls,
        scenarios: Sequence[ScenarioRecord],
        errors: Sequence[ErrorEntry],
        pass_hat_k: Mapping[str, object] | None = None,
        **other: object,
    ) -> RunMetrics:
        """A new document (``pass_hat_k`` left out when None, ``other`` keys after it)."""
        values: dict[str, Any] = {"scenarios": list(scenarios), "errors_without_result": list(errors)}
        if pass_hat_k is not None:
            values["pass_hat_k"] = pass_hat_k
        return cls.model_validate({**values, **other})

    @property
    def other(self) -> dict[str, object]:
        """Keys besides the scenarios and errors (``pass_hat_k`` and any unknown ones)."""
        data = {"pass_hat_k": self.pass_hat_k} if "pass_hat_k" in self.model_fields_set else {}
        return {**data, **(self.model_extra or {})}

    def pass_k_block(self) -> object:
        """The pass^k block as written (``pass_k`` in files of earlier versions)."""
        if "pass_hat_k" in self.model_fields_set:
            return self.pass_hat_k
        return (self.model_extra or {}).get("pass_k")

    def document(self) -> dict[str, object]:
        out: dict[str, object] = {
            "scenarios": [record.document() for record in self.scenarios],
            "errors_without_result": [error.document() for error in self.errors_without_result],
        }
        out.update(self.other)
        return out


class RunInfo(Part):
    """run.json: the settings fingerprint (what must be equal for verdicts to be of one run) and when."""

    fingerprint: dict[str, Any]
    """Settings by name (``run_folder.fingerprint``): compared key by key, never read one by one."""
    pytest_tau2: str | None = None
    started: str | None = None
    resumed: bool = False
    shard: str | None = None
    """``--tau2-shard I/N`` of the run, or None."""
    merged: dict[str, Any] | None = None
    """Set by ``pytest-tau2 merge``: when, and from which folders."""
    rescored: dict[str, Any] | None = None
    """Set by ``pytest-tau2 rescore``: the folder re-scored, when, what changed, agreement with the saved judge."""
    endpoints: dict[str, Any] | None = None
    """The model server (``api_base``, credentials masked) of each side that names one: recorded,
    not part of the fingerprint (a merge of shards with their own servers: the sorted list of each side's)."""
