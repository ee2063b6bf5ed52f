"""Many machines: CI shards merged into one result, and a sweep on xdist's remote socket workers.

Every run is a real ``python -m pytest`` process in a throw-away project (the repository's
restaurant scenarios, one of them failing, plus a slice of the tau2 airline and retail ports),
offline: the oracle agent and the scripted user. Module-scoped fixtures share the expensive
runs: the unsharded sweep and its three shards.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import execnet
import pytest

from pytest_tau2.report.merge import MergeError, merge
from tests.plugin.conftest import RESTAURANT_SCENARIOS, junit_cases
from tests.plugin.test_run import WRONG_TOTAL
from tests.support.fake_openai import FakeOpenAIServer, sequence, text
from tests.support.tau2_data import DATA_DIR, requires_data

pytestmark = requires_data("airline", "retail")

SELECTION = "--tau2-scenarios=restaurant__*,tau2_airline__1*,tau2_retail__2*"
CONFTEST = "import restaurant_scenarios  # noqa: F401\nimport pytest_tau2.domains.tau2_sources  # noqa: F401\n"
TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"
TIMINGS = frozenset({"duration_s", "conversation_duration_s"})
"""metrics.json fields that measure time: the only ones two runs of the same sweep may differ in."""


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    results: Path

    def all_metrics(self) -> dict[str, Any]:
        return json.loads((self.results / "all_metrics.json").read_text("utf-8"))  # type: ignore[no-any-return]


def make_project(folder: Path) -> Path:
    """The restaurant example (plus a scenario the oracle fails) and the tau2 ports."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data" / "restaurant").mkdir(parents=True, exist_ok=True)
    (folder / "data" / "restaurant" / "orders.json").write_text('{"orders": []}', "utf-8")
    (folder / "restaurant_scenarios.py").write_text(RESTAURANT_SCENARIOS + WRONG_TOTAL, "utf-8")
    (folder / "conftest.py").write_text(CONFTEST, "utf-8")
    (folder / "test_scenarios.py").write_text(TEST_MODULE, "utf-8")
    return folder


def environment(data_dir: Path = DATA_DIR) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(data_dir), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return env


def run_pytest(project: Path, results: Path, *args: str, xdist: bool = False, timeout: float = 300) -> Run:
    plugins = ["-p", "tau2", *(["-p", "xdist"] if xdist else []), "-p", "no:cacheprovider"]
    command = [sys.executable, "-m", "pytest", *plugins, "-v", f"--tau2-results-dir={results}", *args]
    done = subprocess.run(
        command, cwd=project, env=environment(), capture_output=True, text=True, timeout=timeout, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr, results)


def merge_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "merge", *args],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def scenario_files(results: Path, *, data_dir: bool = True) -> dict[str, Any]:
    """Every file under each scenario folder: JSON parsed (timings dropped from metrics.json), text as is.

    ``data_dir=False`` leaves out the data folder recorded in metrics.json (each machine has its own).
    """
    found: dict[str, Any] = {}
    for path in sorted(results.glob("*/**/*")):
        if not path.is_file():
            continue
        relative = str(path.relative_to(results))
        text = _renumbered_call_ids(path.read_text("utf-8"))
        if path.suffix == ".json":
            data = json.loads(text)
            if path.name == "metrics.json":
                data = _without_timings(data)
                if not data_dir and data.get("data_pin"):
                    data["data_pin"] = {k: v for k, v in data["data_pin"].items() if k != "data_dir"}
            found[relative] = data
        else:
            found[relative] = text
    return found


def _without_timings(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metrics.items() if k not in TIMINGS}


CALL_ID = re.compile(r"\bcall_[0-9]+\b")


def _renumbered_call_ids(text: str) -> str:
    """Tool-call ids numbered in order of appearance within one file.

    The offline participants number tool calls with one counter per process
    (conversation/protocol.py), so a scenario's ids depend on what ran before it in the same
    process: a shard, an xdist worker or a serial run give other numbers for the same calls.
    """
    seen: dict[str, str] = {}
    return CALL_ID.sub(lambda m: seen.setdefault(m[0], f"call_#{len(seen) + 1}"), text)


# ---- CI shards, merged ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, list[Run]]:
    """The unsharded sweep and its three shards (each with a JUnit file in its results folder)."""
    project = make_project(tmp_path_factory.mktemp("shards") / "project")
    full = run_pytest(project, project / "full", SELECTION, f"--junitxml={project / 'full' / 'junit.xml'}")
    shards = [
        run_pytest(
            project,
            project / f"shard{i}",
            SELECTION,
            f"--tau2-shard={i}/3",
            f"--junitxml={project / f'shard{i}' / 'junit.xml'}",
        )
        for i in (1, 2, 3)
    ]
    return full, shards


def test_three_shards_merged_equal_the_unsharded_run_field_by_field(
    sharded: tuple[Run, list[Run]], tmp_path: Path
) -> None:
    full, shards = sharded
    assert full.returncode == pytest.ExitCode.TESTS_FAILED, full.stdout[-3000:]  # restaurant__wrong_total fails
    assert [r.returncode for r in shards].count(pytest.ExitCode.TESTS_FAILED) == 1
    sizes = [len(r.all_metrics()["scenarios"]) for r in shards]
    assert sum(sizes) == len(full.all_metrics()["scenarios"]) and max(sizes) - min(sizes) <= 1

    into = tmp_path / "merged"
    done = merge_command(*(str(r.results) for r in shards), "--into", str(into))
    assert done.returncode == 0, done.stderr
    assert f"results: {into}" in done.stdout

    # all_metrics.json: the same entries in the same order; only timings differ.
    merged_all, full_all = json.loads((into / "all_metrics.json").read_text("utf-8")), full.all_metrics()
    assert set(merged_all) == set(full_all)
    assert [_without_timings(m) for m in merged_all["scenarios"]] == [
        _without_timings(m) for m in full_all["scenarios"]
    ]
    assert merged_all["errors_without_result"] == full_all["errors_without_result"] == []
    for key in set(full_all) - {"scenarios", "errors_without_result"}:
        assert merged_all[key] == full_all[key], key
    # Every scenario folder, file by file.
    assert scenario_files(into) == scenario_files(full.results)
    # The summary (no timings in it) is the same text.
    assert (into / "all_summary.txt").read_text("utf-8") == (full.results / "all_summary.txt").read_text("utf-8")
    # run.json: the same fingerprint, no shard; where it came from.
    merged_run = json.loads((into / "run.json").read_text("utf-8"))
    assert merged_run["fingerprint"] == json.loads((full.results / "run.json").read_text("utf-8"))["fingerprint"]
    assert merged_run["shard"] is None
    assert [s["shard"] for s in merged_run["merged"]["from"]] == ["1/3", "2/3", "3/3"]
    # JUnit: the same test cases with the same outcomes and properties (times aside).
    assert junit_cases(into / "junit.xml") == junit_cases(full.results / "junit.xml")
    assert (into / "report.html").stat().st_size > 10_000


def test_merge_refuses_missing_repeated_and_overlapping_shards(sharded: tuple[Run, list[Run]], tmp_path: Path) -> None:
    full, shards = sharded
    first, second, third = (str(r.results) for r in shards)

    missing = merge_command(first, third, "--into", str(tmp_path / "a"))
    assert missing.returncode == 2
    assert "missing shard 2/3 (of 3)" in missing.stderr

    repeated = merge_command(first, second, third, first, "--into", str(tmp_path / "b"))
    assert f"{first} is given twice" in repeated.stderr
    assert f"shard 1/3 is given more than once: {first}, {first}" in repeated.stderr

    mixed = merge_command(first, second, third, str(full.results), "--into", str(tmp_path / "c"))
    assert mixed.returncode == 2
    assert f"not from a sharded run (no --tau2-shard in run.json): {full.results}" in mixed.stderr
    one = full.all_metrics()["scenarios"][0]["scenario"]
    owners = [str(r.results) for r in shards if one in {m["scenario"] for m in r.all_metrics()["scenarios"]}]
    assert f"{one} is in more than one folder: {owners[0]}, {full.results}" in mixed.stderr
    assert not any((tmp_path / name).exists() for name in "abc")  # nothing written when refused


def test_merge_refuses_shards_of_different_settings(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    picked = "--tau2-scenarios=restaurant__*"
    one = run_pytest(project, project / "s1", picked, "--tau2-shard=1/2")
    two = run_pytest(project, project / "s2", picked, "--tau2-shard=2/2", "--tau2-max-turns=7")
    assert {one.returncode, two.returncode} == {pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED}  # wrong_total in one
    with pytest.raises(MergeError) as info:
        merge([one.results, two.results], tmp_path / "merged")
    assert f"max_turns: None in {one.results}, 7 in {two.results}" in str(info.value)
    assert "different settings or data pin (run.json fingerprint)" in str(info.value)
    assert not (tmp_path / "merged").exists()


def test_merge_refuses_a_shard_that_read_other_tau2_data(sharded: tuple[Run, list[Run]], tmp_path: Path) -> None:
    _, shards = sharded
    copies = []
    for run in shards:
        copy = tmp_path / run.results.name
        shutil.copytree(run.results, copy)
        copies.append(copy)
    # As if shard 3 had run on a machine with other (unpinned) airline data.
    path = copies[2] / "all_metrics.json"
    data = json.loads(path.read_text("utf-8"))
    airline = [m for m in data["scenarios"] if m["domain"] == "tau2_airline"]
    assert airline
    for m in airline:
        m["data_pin"] = {**m["data_pin"], "pinned": False}
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(MergeError, match=r"domain tau2_airline read different tau2 data: .*in .*shard3"):
        merge(copies, tmp_path / "merged")


# ---- remote xdist workers: execnet socket servers on loopback -------------------------------------

SOCKETSERVER = Path(execnet.__file__).parent / "script" / "socketserver.py"
FAKE_KEY = "sk-fake-remote-4c1b9e27d0a8f3615b"
HANG_CONFTEST = '''

import os
import time

import pytest

from pytest_tau2.run import participants


@pytest.fixture
def tau2_agent(tau2_scenario, tau2_context):
    """On a worker started with MANY_MACHINES_HANG: one scenario hangs (its worker is then killed)."""
    mark = os.environ.get("MANY_MACHINES_HANG")
    if mark and tau2_scenario.name == os.environ["MANY_MACHINES_HANG_SCENARIO"]:
        with open(mark, "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(300)
    return participants.make_agent(tau2_context)
'''
REMOTE_SELECTION = "--tau2-scenarios=restaurant__*,tau2_airline__1*"
HANGING = "restaurant__party_order"


@dataclass
class SocketWorker:
    """``python socketserver.py 127.0.0.1:PORT`` in its own folder, with its own tau2 data folder."""

    folder: Path
    port: int
    process: subprocess.Popen[bytes]

    @property
    def spec(self) -> str:
        return f"socket=127.0.0.1:{self.port}"

    @property
    def hang_mark(self) -> Path:
        return self.folder / "hanging"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def worker_data(folder: Path, broken: bool = False) -> Path:
    """A tau2 data folder of the worker's own, with the airline domain (the data refuses symlinks
    that lead out of its root, so files are hard-linked where possible, else copied); ``broken``:
    a real copy with one file changed, so it no longer matches the pin."""
    root = folder / "tau2-data"
    shutil.copytree(DATA_DIR / "tau2" / "user_simulator", root / "tau2" / "user_simulator", copy_function=_link_or_copy)
    view = DATA_DIR.parent / "tau2-view" / "agent_view.json"  # upstream's prompts (docs/many-machines.md)
    if view.is_file():
        (folder / "tau2-view").mkdir()
        _link_or_copy(str(view), str(folder / "tau2-view" / "agent_view.json"))
    domain = root / "tau2" / "domains" / "airline"
    copy = shutil.copy2 if broken else _link_or_copy
    shutil.copytree(DATA_DIR / "tau2" / "domains" / "airline", domain, copy_function=copy)
    if broken:
        policy = domain / "policy.md"
        policy.write_text(policy.read_text("utf-8") + "\nChanged on this worker.\n", "utf-8")
    return root


def _link_or_copy(source: str, target: str) -> object:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
    return target


SUPERVISOR = "import subprocess, sys\nwhile True:\n    subprocess.call([sys.executable, *sys.argv[1:]])\n"
"""Restarts the socket server whenever it ends, as a service manager would on a real host."""


def start_worker(folder: Path, *, hang: bool = False, broken: bool = False, supervised: bool = False) -> SocketWorker:
    folder.mkdir(parents=True)
    env = environment(worker_data(folder, broken))
    env["PYTHONUNBUFFERED"] = "1"
    if hang:
        env.update(MANY_MACHINES_HANG=str(folder / "hanging"), MANY_MACHINES_HANG_SCENARIO=HANGING)
    port = _free_port()
    log = (folder.parent / f"{folder.name}.log").open("wb")
    server = [str(SOCKETSERVER), f"127.0.0.1:{port}"]
    command = [sys.executable, "-c", SUPERVISOR, *server] if supervised else [sys.executable, *server]
    # Its own session: the fixture ends the server (and a supervisor's child) by process group id.
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 30
    while b"Entering Accept loop" not in (folder.parent / f"{folder.name}.log").read_bytes():
        assert process.poll() is None, f"socket server in {folder} exited"
        assert time.monotonic() < deadline, f"socket server in {folder} did not start"
        time.sleep(0.05)
    return SocketWorker(folder, port, process)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[SocketWorker]]:
    started: list[SocketWorker] = []

    def stop() -> None:
        for worker in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.process.pid, signal.SIGKILL)
            worker.process.wait(timeout=30)

    try:
        yield started
    finally:
        stop()


def remote_args(project: Path, workers: Sequence[SocketWorker], *args: str) -> list[str]:
    txs = [arg for worker in workers for arg in ("--tx", worker.spec)]
    return ["-d", *txs, f"--rsyncdir={project}", str(project), *args]


def llm_user_args(server: FakeOpenAIServer) -> list[str]:
    """A litellm user on the loopback fake server, with a key that must never reach a worker's disk."""
    args = json.dumps({"api_base": server.base_url, "api_key": FAKE_KEY})
    return ["--tau2-user-model=openai/user", f"--tau2-user-args={args}"]


def remote_project(folder: Path) -> Path:
    project = make_project(folder)
    (project / "conftest.py").write_text(CONFTEST + HANG_CONFTEST, "utf-8")
    # A configuration file makes the project folder the rootdir on every machine (without one,
    # pytest roots a worker at its working folder, above the rsynced project).
    (project / "pytest.ini").write_text("[pytest]\n", "utf-8")
    return project


def test_a_sweep_on_two_socket_workers_equals_a_local_run(tmp_path: Path, workers: list[SocketWorker]) -> None:
    project = remote_project(tmp_path / "controller" / "project")
    workers += [start_worker(tmp_path / "w1"), start_worker(tmp_path / "w2")]
    with FakeOpenAIServer() as server:
        server.add_handler("user", sequence(text("Thanks, that is all I needed.")))
        user = llm_user_args(server)
        local = run_pytest(project, tmp_path / "controller" / "local", REMOTE_SELECTION, *user)
        remote = run_pytest(
            project,
            tmp_path / "controller" / "remote",
            *remote_args(project, workers, REMOTE_SELECTION, *user),
            xdist=True,
        )
    assert local.returncode == remote.returncode == pytest.ExitCode.TESTS_FAILED, remote.stdout[-4000:]
    assert "2 workers [18 items]" in remote.stdout
    assert outcomes(remote) == outcomes(local) and len(outcomes(local)) == 18
    assert {line.split("]")[0] for line in remote.stdout.splitlines() if line.startswith("[gw")} == {"[gw0", "[gw1"}

    # Same files, field by field; each worker read its own data folder.
    assert scenario_files(remote.results, data_dir=False) == scenario_files(local.results, data_dir=False)
    used = {m["data_pin"]["data_dir"] for m in remote.all_metrics()["scenarios"] if m["data_pin"]}
    assert used == {str(w.folder / "tau2-data") for w in workers}
    assert (remote.results / "all_summary.txt").read_text("utf-8") == (local.results / "all_summary.txt").read_text(
        "utf-8"
    )
    # Written by the controller only: no results on a worker, and the key nowhere on a worker's disk.
    for worker in workers:
        written = [p for p in worker.folder.rglob("*") if p.is_file()]
        assert any(p.name == "restaurant_scenarios.py" for p in written)  # the project reached it by rsync
        assert not [p for p in written if p.name in ("metrics.json", "all_metrics.json", "run.json", "transcript.json")]
        assert not [p for p in written if FAKE_KEY.encode() in p.read_bytes()]
        assert FAKE_KEY not in (tmp_path / f"{worker.folder.name}.log").read_text("utf-8", errors="replace")


def outcomes(run: Run) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in run.stdout.splitlines():
        match = OUTCOME.search(line)
        if match:
            found[match["name"] or match["name2"]] = match["outcome"] or match["outcome2"]
    return found


OUTCOME = (
    re.compile(  # "[gw0] [ 5%] PASSED path::test_scenario[x]" under xdist, "path::test_scenario[x] PASSED" otherwise
        r"\b(?P<outcome>PASSED|FAILED|ERROR|SKIPPED) \S*::test_scenario\[(?P<name>[^\]]+)\]"
        r"|::test_scenario\[(?P<name2>[^\]]+)\] (?P<outcome2>PASSED|FAILED|ERROR|SKIPPED)\b"
    )
)


def test_a_worker_whose_tau2_data_differs_from_the_pin_is_an_error_naming_it(
    tmp_path: Path, workers: list[SocketWorker]
) -> None:
    project = remote_project(tmp_path / "controller" / "project")
    workers += [start_worker(tmp_path / "good"), start_worker(tmp_path / "bad", broken=True)]
    remote = run_pytest(
        project, tmp_path / "controller" / "remote", *remote_args(project, workers, REMOTE_SELECTION), xdist=True
    )
    # The bad worker's data error is a collection error naming the worker, its host and its data folder;
    # the run stops before any scenario (one sweep never mixes data sets).
    assert remote.returncode == pytest.ExitCode.TESTS_FAILED, remote.stdout[-4000:]
    bad = workers[1]
    pid = bad.process.pid
    remote_out = remote.stdout
    assert "ERROR collecting tau2_airline__unavailable" in remote_out
    assert (
        f"on xdist worker gw1 on {socket.gethostname()} (pid {pid}, TAU2_DATA_DIR={bad.folder / 'tau2-data'}): "
        "tau2 data for domain 'airline'" in remote_out
    )
    assert "airline/policy.md: sha256 mismatch" in remote_out
    assert "gw0 on" not in remote_out  # the good worker is not blamed
    assert " PASSED " not in remote_out and not (tmp_path / "controller" / "remote" / "all_metrics.json").exists()


def test_killing_a_remote_worker_midway_counts_its_scenario_as_an_error(
    tmp_path: Path, workers: list[SocketWorker]
) -> None:
    project = remote_project(tmp_path / "controller" / "project")
    workers += [start_worker(tmp_path / f"w{i}", hang=True, supervised=True) for i in (1, 2)]
    results = tmp_path / "controller" / "remote"
    command = [sys.executable, "-m", "pytest", "-p", "tau2", "-p", "xdist", "-p", "no:cacheprovider", "-v",
               f"--tau2-results-dir={results}", *remote_args(project, workers, REMOTE_SELECTION)]  # fmt: skip
    log = tmp_path / "controller.log"
    with log.open("w") as out:
        controller = subprocess.Popen(command, cwd=project, env=environment(), stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while not any(w.hang_mark.exists() and w.hang_mark.read_text() for w in workers):
            assert controller.poll() is None, log.read_text("utf-8")[-4000:]
            assert time.monotonic() < deadline, "no worker reached the hanging scenario"
            time.sleep(0.05)
        victim = next(w for w in workers if w.hang_mark.exists())
        os.kill(int(victim.hang_mark.read_text()), signal.SIGKILL)  # the worker: the socket server's process
        assert controller.wait(timeout=240) == pytest.ExitCode.TESTS_FAILED, log.read_text("utf-8")[-4000:]
    text = log.read_text("utf-8")
    assert "INTERNALERROR" not in text
    assert f"tau2: socket worker 127.0.0.1:{victim.port} is accepting connections again" in text
    assert "replacing crashed worker" in text

    data = json.loads((results / "all_metrics.json").read_text("utf-8"))
    # The killed worker's scenario is an error without a result, with xdist's reason ...
    assert [e["scenario"] for e in data["errors_without_result"]] == [HANGING]
    assert "crashed while running" in data["errors_without_result"][0]["reason"]
    assert not (results / HANGING).exists()
    # ... and every other scenario finished, with its verdict.
    verdicts = {m["scenario"]: m["is_successful"] for m in data["scenarios"]}
    assert len(verdicts) == 17 and HANGING not in verdicts
    assert {name for name, ok in verdicts.items() if ok is not True} == {"restaurant__wrong_total"}
    summary = (results / "all_summary.txt").read_text("utf-8")
    assert summary.startswith("Success rate: 16/18 (88.9%) of 18 scenarios (1 errors without a result")


def test_workers_run_their_own_checkout_and_read_its_in_repo_data(tmp_path: Path, workers: list[SocketWorker]) -> None:
    """No --rsyncdir: each worker runs in its own copy of the project (``//chdir=``), and the
    in-repo data it reads is that copy's; the controller's copy has no data folder at all."""
    project = remote_project(tmp_path / "controller" / "project")
    shutil.rmtree(project / "data")
    workers += [start_worker(tmp_path / "w1"), start_worker(tmp_path / "w2")]
    for worker in workers:
        remote_project(worker.folder / "project")
    txs = [arg for w in workers for arg in ("--tx", f"{w.spec}//chdir={w.folder / 'project'}")]
    remote = run_pytest(
        project, tmp_path / "controller" / "remote", "-d", *txs, "--tau2-scenarios=restaurant__*", xdist=True
    )
    assert remote.returncode == pytest.ExitCode.TESTS_FAILED, remote.stdout[-4000:]
    verdicts = {m["scenario"]: m["is_successful"] for m in remote.all_metrics()["scenarios"]}
    assert len(verdicts) == 7 and remote.all_metrics()["errors_without_result"] == []
    assert {name for name, ok in verdicts.items() if ok is not True} == {"restaurant__wrong_total"}
    assert not (project / "data").exists()
