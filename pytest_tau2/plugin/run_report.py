"""The run-level report, written by the process that owns the results folder (the xdist
controller when there are workers) from THIS run's reports only.

Each scenario item's setup report carries its result payload (``report.tau2_result``: the
scenario's files and metrics; xdist serializes it from the workers). This object writes each
scenario's files as its report arrives, then all_metrics.json, all_summary.txt, report.html and
the terminal summary. A scenario that started but left no result (bad data, a crashed worker,
an interrupt) is still counted, as an error with its reason: items run == entries in
all_metrics.json == JUnit testcases.

Features add to the summary through :class:`SummarySection` (the budget's line, the gates, the
estimate vs actual): the report asks each for its lines when it writes the summary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_tau2.plugin.keys import item_id
from pytest_tau2.plugin.terminal import Terminal
from pytest_tau2.report import agreement, calls, files, uncertainty
from pytest_tau2.report.leaderboard import pass_hat_k_document
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import ErrorEntry, RunMetrics
from pytest_tau2.report.saving import ResultWriter
from pytest_tau2.report.summary import render
from pytest_tau2.report.terminal import escape_controls
from pytest_tau2.report.views import VIEWS, RunFiles, write_views
from pytest_tau2.run.budget import BUDGET_REASON
from pytest_tau2.run.run_folder import RunFolder

UNREPORTED_KEY = "tau2_unreported"
"""``workeroutput`` key: the payloads of a worker's conversations that finished for items it
never reached (concurrency.finish_prefetching), written by the controller when the worker ends."""
_WORKER_LINE = re.compile(r"^\[[\w-]+\] .* -- Python ")


class SummarySection(Protocol):
    """A part of the run's summary that a feature contributes (plugin/budgeting.py, gate.py,
    estimating.py), asked for its lines when the summary is written (the process that owns the
    results folder, once a scenario started)."""

    top: bool
    """Shown first, above the interrupt line and the scenario table (the budget's line); else
    after the table, in the order the sections were added."""

    def lines(self) -> list[str]:
        """The section's lines; none: nothing to say in this run."""
        ...


class RunReport:
    def __init__(
        self,
        results_dir: Path,
        *,
        is_worker: bool,
        terminal: Terminal,
        folder: RunFolder | None = None,
        ci_level: float = 0.95,
    ) -> None:
        self.results_dir = results_dir
        self.ci_level = ci_level
        """--tau2-ci-level: the level of the summary's and all_metrics.json's intervals."""
        self.sections: list[SummarySection] = []
        """What features add to the summary (:class:`SummarySection`)."""
        self.terminal = terminal
        self.is_worker = is_worker
        self.folder = folder
        self.started: dict[str, str] = {}
        """nodeid -> result folder of every scenario item that started, in start order."""
        self.results: dict[str, ScenarioRecord] = {}
        """nodeid -> its result record."""
        self.errors: dict[str, dict[str, Any]] = {}
        """nodeid -> ``{scenario, nodeid, reason}`` for items that ended without a result."""
        self.selected = 0
        self.interrupted: str | None = None
        self.write_failures: list[str] = []
        """One line per run-level file that could not be written."""
        self.required_failed = False
        self.saved_unreported: list[str] = []
        """Folders of conversations that finished after pytest stopped taking items."""
        self.unreported_errors: dict[str, str] = {}
        """Those of them that ended in an infrastructure error: folder -> the error."""
        self.session: pytest.Session | None = None
        """Set by the run (plugin/run_state.py) when the session starts."""
        self.summary_text: str | None = None
        self.writer = ResultWriter(results_dir, on_failure=self._save_failed)
        """Writes every scenario result into the folder (this process owns it), as soon as it is made."""
        self.on_stop: list[Callable[[str], None]] = []
        """Called (on any thread) when a result could not be saved: stop starting conversations."""
        self.not_saved: dict[str, str] = {}
        """nodeid -> why its result, carried by its report, could not be saved."""
        self.budget_skipped = 0
        """Scenario items --tau2-budget left unstarted (skipped, naming the budget)."""

    def add_section(self, section: SummarySection) -> None:
        self.sections.append(section)

    # ---- collecting this run's results --------------------------------------------------------

    def worker_collected(self, ids: list[str]) -> None:
        """Called by the xdist hooks: how many scenario items the run selected."""
        self.selected = max(self.selected, sum(1 for nodeid in ids if item_id(nodeid) is not None))

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        found = item_id(nodeid)
        if found is not None:
            self.started.setdefault(nodeid, found)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        self._tell_save_failures()
        found = item_id(report.nodeid)
        if found is None:
            return
        payload = getattr(report, "tau2_result", None)
        if payload:
            self._write(report.nodeid, payload)
            if report.nodeid in self.not_saved:  # before the terminal and JUnit see it: not a pass
                report.outcome = "failed"
                report.longrepr = self.not_saved[report.nodeid]
        elif report.when == "setup" and report.skipped and report.nodeid not in self.results:
            self.started.pop(report.nodeid, None)  # not applicable, or left unstarted by --tau2-budget
            self.budget_skipped += is_budget_skip(report)
        elif report.failed and report.nodeid not in self.results and report.nodeid not in self.errors:
            self.errors[report.nodeid] = {
                "scenario": self.started.get(report.nodeid, found),
                "nodeid": report.nodeid,
                "reason": _reason(report),
            }

    def _write(self, nodeid: str, payload: dict[str, Any]) -> None:
        if payload.get("saved") or self.writer.holds(payload):
            pass  # saved when it was made (the item's setup, or the prefetcher): already on disk
        else:
            failure = self.writer.save(payload)
            self._tell_save_failures()
            if failure is not None:  # no result, so no pass: an error saying why
                self.not_saved[nodeid] = f"the result of {payload['folder']} could not be saved: {failure}"
                self.errors[nodeid] = {
                    "scenario": payload["folder"],
                    "nodeid": nodeid,
                    "reason": self.not_saved[nodeid],
                }
                self.results.pop(nodeid, None)
                return
        record = self.results[nodeid] = ScenarioRecord.read(payload["metrics"])
        self.errors.pop(nodeid, None)
        if self.folder is not None:
            self.folder.observe(record.agent, record.user)  # run.json names the agent the results name
        # Reports stay in memory until the session ends (pytest keeps them for its summary):
        # keep the metrics, drop the file texts (transcripts, DB dumps) once they are on disk.
        payload["files"] = {}
        payload.pop("binary_files", None)  # a phone call's call.wav

    def _save_failed(self, line: str) -> None:
        """The first result that could not be saved (a full disk): every later one would be lost
        too, so the run stops starting conversations (any thread)."""
        reason = f"stopping the run: a result could not be saved ({line})"
        if self.session is not None and not self.session.shouldstop:
            self.session.shouldstop = reason
        for stop in list(self.on_stop):
            try:
                stop(reason)
            except Exception:  # stopping is best effort; the item errors say what was lost
                pass

    def _tell_save_failures(self) -> None:
        """Each failed save, on the terminal as soon as this (main) thread hears of it."""
        for line in self.writer.failures_to_tell():
            self.terminal.write_line(f"tau2: could not save a result: {line}", red=True)

    def save_unreported(self, payload: dict[str, Any]) -> None:
        """Write the files of a conversation that finished in the background for an item pytest
        never reached (the session stopped early). They are not this run's results (no item,
        no JUnit testcase, not in all_metrics.json), but a complete saved result that
        ``--tau2-resume`` reports instead of paying for the conversation again."""
        if self.is_worker or self.writer.holds(payload):
            return  # the controller owns the folder; or it is on disk already (saved when made)
        self.writer.save(payload)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """An xdist worker ended: save what it finished for items it never reached."""
        for payload in (getattr(node, "workeroutput", None) or {}).get(UNREPORTED_KEY) or ():
            self.save_unreported(payload)

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        # xdist ends a session stopped by -x / --maxfail with its own KeyboardInterrupt subclass,
        # whose message says why ("stopping after 1 failures"): only a real Ctrl-C is one.
        exc = getattr(excinfo, "value", None)
        plain = exc is None or type(exc) is KeyboardInterrupt or not str(exc)
        self.interrupted = "interrupted (Ctrl-C)" if plain else str(exc)

    # ---- the run's files -------------------------------------------------------------------------

    def entries(self) -> tuple[list[ScenarioRecord], list[ErrorEntry]]:
        """This run's results, and the scenarios that left no result (with the reason)."""
        errors = dict(self.errors)
        for nodeid, folder in self.started.items():
            if nodeid not in self.results and nodeid not in errors:
                reason = self.interrupted or "the run stopped before this scenario finished"
                errors[nodeid] = {"scenario": folder, "nodeid": nodeid, "reason": reason}
        metrics = [self.results[n] for n in sorted(self.results, key=lambda n: (self.started.get(n) or n) + "\0" + n)]
        entries = [ErrorEntry.model_validate(e) for e in errors.values()]
        return metrics, sorted(entries, key=lambda e: e.scenario)

    def _text(self, session: pytest.Session, metrics: list[ScenarioRecord], errors: list[ErrorEntry]) -> str:
        text = render(metrics, errors, level=self.ci_level)
        for section in self.sections:
            lines = [] if section.top else section.lines()
            if lines:
                text += "\n" + "\n".join(lines) + "\n"
        done = len(metrics) + len(errors)
        stop = self.interrupted or (str(session.shouldstop) if session.shouldstop else None)
        if stop is None and session.shouldfail:
            stop = str(session.shouldfail)  # -x / --maxfail
        if stop is not None and done < max(self.selected, done):
            text = f"Interrupted after {done} of {self.selected} scenarios: {stop}\n" + text
        top = [line for section in self.sections if section.top for line in section.lines()]
        if top:
            text = "\n".join(top) + "\n" + text
        if self.saved_unreported:
            text += self._background_text(stop)
        resumed = sum(1 for m in metrics if m.resumed)
        if resumed:
            text += f"\n{resumed} of {len(metrics)} results resumed from the saved run (not run again)\n"
        if self.folder is not None and self.folder.moved:
            text += f"Leftovers of unfinished scenarios moved aside: {', '.join(self.folder.moved)}\n"
        for note in self.folder.notes if self.folder is not None else ():
            text += f"Note: {note}\n"
        return text

    def _background_text(self, stop: str | None) -> str:
        """What became of the conversations that finished after the run stopped (not counted above)."""
        errors = self.unreported_errors
        results = len(self.saved_unreported) - len(errors)
        text = ""
        if results:
            text += (
                f"\n{results} more scenarios finished in the background after the run stopped:"
                " not counted above, saved in their folders; --tau2-resume reports them without running them again\n"
            )
        if errors:
            kinds = sorted(set(errors.values()))
            same = len(kinds) == 1 and stop is not None and kinds[0] in stop
            why = (
                "all with the error that stopped the run"
                if same
                else (
                    "all with: " + kinds[0] if len(kinds) == 1 else f"{len(kinds)} different errors, first: {kinds[0]}"
                )
            )
            text += (
                f"\n{len(errors)} more scenarios ran in the background and ended in an infrastructure error, "
                f"{why}: no result, not counted above; their folders keep the files, "
                "and --tau2-resume runs them again\n"
            )
        return text

    def write_files(self, session: pytest.Session) -> None:
        """The run's files and the summary's text, at the very end of the session (the run's finish)."""
        if self.is_worker or not (self.started or self.budget_skipped):  # a budget may stop every scenario
            return
        metrics, errors = self.entries()
        reached = set(self.started.values())  # saved when made, for items pytest never reached
        self.saved_unreported = sorted(f for f in self.writer.saved_folders() if f not in reached)
        for folder in self.saved_unreported:  # those that are no result: a resume runs them again (run_folder.py)
            error = ScenarioRecord.read(self.writer.metrics_of(folder) or {}).infrastructure_error
            if error:
                self.unreported_errors[folder] = error
        lost = [e.scenario for e in errors]
        intervals = uncertainty.document(metrics, lost, self.ci_level)
        judges = agreement.document(metrics)  # several judges only: a one-judge file stays as it was
        extra: dict[str, object] = {agreement.KEY: judges} if judges is not None else {}
        voice = calls.document(metrics)  # phone calls only (docs/voice.md)
        if voice is not None:
            extra[calls.KEY] = voice
        document = RunMetrics.of(metrics, errors, pass_hat_k_document(metrics, lost), intervals=intervals, **extra)
        self.summary_text = self._text(session, metrics, errors)  # the terminal summary prints the same text
        run = RunFiles(self.results_dir, metrics, errors, document, self.summary_text)
        for name, exc in write_views(run):  # each view on its own: one that fails never loses the others
            view = VIEWS.get(name)
            self.file_failed(name, _why(exc), required=view is not None and view.required)
        if self.required_failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a run whose files are missing did not deliver

    def file_failed(self, name: str, why: str, *, required: bool) -> None:
        """A run-level file could not be written: one line at the end (an optional view, such as
        report.html, is a warning; a required file, such as junit.xml, fails the run's exit status)."""
        self.write_failures.append(f"{'error' if required else 'warning'}: could not write {name}: {why}")
        self.required_failed = self.required_failed or required

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not (self.started or self.budget_skipped) or self.session is None:
            return
        terminalreporter.section("tau2 summary")
        text = self.summary_text or self._text(self.session, *self.entries())
        for line in text.rstrip().splitlines():
            terminalreporter.write_line(escape_controls(line))  # all_summary.txt keeps the exact text
        self._tell_save_failures()
        for failure in self.write_failures:
            terminalreporter.write_line(failure, red=failure.startswith("error"), yellow=failure.startswith("warning"))
        terminalreporter.write_line(f"results: {self.results_dir}")

    def close(self) -> None:
        """The results folder's lock removed (the run's last step)."""
        if self.folder is not None:
            self.folder.close()


def _why(exc: Exception) -> str:
    """One line: the operating system's reason for a file error, else the error's type and text."""
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {files.describe_os_error(exc)}"
    return f"{type(exc).__name__}: {exc}"


def _reason(report: pytest.TestReport) -> str:
    """The first line of the error (its message, or a crashed worker's note), not the traceback."""
    text = (report.longreprtext or "").strip()
    # xdist prefixes a worker's report with "[gw1] linux -- Python 3.11.7 /usr/bin/python": not the reason.
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _WORKER_LINE.match(line)]
    errors = [line[2:].strip() for line in lines if line.startswith("E ")]
    return ((errors or lines or [f"{report.when} failed"])[0])[:500]


def is_budget_skip(report: pytest.TestReport) -> bool:
    """A setup report of an item the budget left unstarted."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
    return report.skipped and BUDGET_REASON in str(reason)
