"""Every extension point registers the same way (extension/registry.py), and a user's package adds
extensions through the one entry-point group ``pytest_tau2``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_tau2.extension.registry import Registry
from pytest_tau2.llm import client as _client  # noqa: F401  (importing it registers the built-in transports)
from pytest_tau2.llm import transport
from pytest_tau2.report import views
from pytest_tau2.run import participants
from pytest_tau2.scenario import registry as scenarios
from pytest_tau2.scoring import predicates
from pytest_tau2.scoring.signals import SIGNALS


def test_a_registry_refuses_a_second_entry_under_one_key_unless_replaced() -> None:
    reg: Registry[str, int] = Registry("number", describe=lambda n: f"the number {n}")
    assert reg.register("one", 1) == 1
    reg.register("one", 1)  # the same entry again: nothing happens
    with pytest.raises(ValueError, match="a number 'one' is already registered \\(the number 1\\); not replacing it"):
        reg.register("one", 2)
    reg.register("one", 2, replace=True)
    assert dict(reg) == {"one": 2} and "one" in reg and len(reg) == 1
    saved = reg.snapshot()
    assert reg.unregister("one") == 2 and "one" not in reg
    reg.restore(saved)
    assert reg["one"] == 2


def test_every_extension_point_is_a_registry() -> None:
    tables = (SIGNALS, participants._KINDS, predicates.DB_STATE_PREDICATES, scenarios.REGISTRY, scenarios.SOURCES)
    for table in (*tables, transport._TRANSPORTS, views.VIEWS):
        assert isinstance(table, Registry)
    assert [t.name for t in transport.transports()] == ["cassette", "wire", "litellm"]
    assert list(views.VIEWS) == [
        "all_metrics.json",
        "all_summary.txt",
        "report.html",
        "failure_modes.json",
        "all_latencies.csv",
        "upstream_differences.json",
    ]


def test_a_registered_report_view_is_written_with_the_others_and_may_fail_alone(tmp_path: Path) -> None:
    seen: list[int] = []

    def count(run: views.RunFiles) -> None:
        seen.append(len(run.records))
        (run.results_dir / "count.txt").write_text(str(len(run.records)), "utf-8")

    def broken(run: views.RunFiles) -> None:
        raise OSError("disk full")

    from pytest_tau2.report.run_record import RunMetrics

    run = views.RunFiles(tmp_path, [], [], RunMetrics.of([], [], {}), "Success rate: 0/0\n")
    views.register_report_view(views.RunView("count.txt", count))
    views.register_report_view(views.RunView("broken.txt", broken))
    try:
        failed = views.write_views(run)
    finally:
        views.VIEWS.unregister("count.txt")
        views.VIEWS.unregister("broken.txt")
    assert [(name, str(exc)) for name, exc in failed] == [("broken.txt", "disk full")]
    assert (tmp_path / "count.txt").read_text("utf-8") == "0" and seen == [0]
    assert (tmp_path / "all_summary.txt").read_text("utf-8") == "Success rate: 0/0\n"
    assert (tmp_path / "all_metrics.json").exists() and (tmp_path / "report.html").exists()


PACKAGE = """
from pytest_tau2 import register_db_state_predicate
from pytest_tau2.run.participants import ParticipantKind, register_participant_kind
from pytest_tau2.scoring.signals import SignalSpec, register_signal


def _never(inputs):
    return None


register_signal(SignalSpec("from_ep", "from_ep_rate", "From an entry point", "bool", _never, "x", "never"))


@register_db_state_predicate(domain="ep_domain")
def ep_predicate(db):
    return True


def setup():
    register_participant_kind(ParticipantKind("ep_agent", "agent", lambda ctx, arg: None, "from an entry point"))
"""


def test_a_package_registers_extensions_through_the_entry_point_group(tmp_path: Path) -> None:
    (tmp_path / "tau2ext.py").write_text(textwrap.dedent(PACKAGE), "utf-8")
    info = tmp_path / "tau2ext-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tau2ext\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text("[pytest_tau2]\nsignals = tau2ext\nkinds = tau2ext:setup\n", "utf-8")
    code = (
        "from pytest_tau2.scoring.signals import SIGNALS\n"
        "from pytest_tau2.run import participants\n"
        "from pytest_tau2 import list_registered_predicates\n"
        "print('from_ep' in SIGNALS, [k.name for k in participants.kinds('agent')][-1],"
        " list_registered_predicates('ep_domain'))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "True ep_agent {'ep_domain': ['ep_predicate']}"


def test_an_entry_point_that_names_neither_a_module_nor_a_function_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tau2bad.py").write_text("THING = 42\n", "utf-8")
    info = tmp_path / "tau2bad-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tau2bad\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text("[pytest_tau2]\nbad = tau2bad:THING\n", "utf-8")
    code = "from pytest_tau2.scoring.signals import SIGNALS\nlist(SIGNALS)\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode != 0
    assert "entry point bad = tau2bad:THING (group pytest_tau2) is a int" in done.stderr
