"""Record a retail subset once against the loopback model, then replay it with no server at all.

One nested pytest run records five retail scenarios (agent, user and judge models scripted by
``llm_scripts``; one scenario scripted to fail) with ``--tau2-record-mode once``. The server is
then stopped and the same options replay: one process, ``-n 2``, ``--tau2-concurrency 4``; a
copy of the data with one scenario changed; a copy of the cassettes with calls missing, refilled
by ``new_episodes``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.llm_scripts import (
    DATA_DIR,
    AgentScript,
    PytestRun,
    Recorded,
    ScriptedModels,
    Tasks,
    call,
    import_probe,
    node,
    probe_records,
    run_pytest,
    shared_once,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer

GOLD = "5"
ONE_ASSERTION = "24"
THREE_ASSERTIONS = "43"
WRONG_WRITE = "88"
PLAIN = "0"
IDS = (PLAIN, GOLD, ONE_ASSERTION, THREE_ASSERTIONS, WRONG_WRITE)
API_KEY = "sk-test-rec0rd-Zq8xW3vLk0pYt7"
PASSWORD = "pa55-R3cord-userinfo"
TASKS = Tasks.load("retail")


def name(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def models() -> ScriptedModels:
    scripted = ScriptedModels(TASKS)
    steps = scripted.gold_steps(WRONG_WRITE)
    steps[0] = call("cancel_pending_order", {"order_id": "#W8835847", "reason": "no longer needed"})
    scripted.agent[WRONG_WRITE] = AgentScript(steps)
    return scripted


def model_args(base_url: str) -> list[str]:
    """Every side on the fake server, with a key and a password in the URL that must never be written."""
    api_base = base_url.replace("http://", f"http://recorder:{PASSWORD}@")
    args = json.dumps({"api_base": api_base, "api_key": API_KEY, "temperature": 0})
    out: list[str] = []
    for side in ("agent", "user", "judge"):
        out += [f"--tau2-{side}-model", f"openai/{side}", f"--tau2-{side}-args", args]
    return out


def env(**extra: str) -> dict[str, str]:
    # aiohttp refuses a URL with user:password next to an Authorization header; httpx sends it.
    return subprocess_env(DISABLE_AIOHTTP_TRANSPORT="True", **extra)


def replay_run(tmp: Path, recorded: Recorded, mode: str = "none", *extra: str, **env_extra: str) -> Recorded:
    probe_args, probe_env, probe_out = import_probe(tmp)
    run = run_pytest(
        [
            *(node(name(i)) for i in IDS),
            *model_args(recorded.base_url),
            "--tau2-record-mode",
            mode,
            f"--tau2-cassette-dir={cassettes(recorded)}",
            *probe_args,
            *extra,
        ],
        tmp,
        env=env(**probe_env, **env_extra),
    )
    return Recorded(run, base_url=recorded.base_url, probe=probe_records(probe_out))


def cassettes(recorded: Recorded) -> Path:
    return recorded.run.results_dir.parent / "cassettes"


def _record(tmp: Path) -> Recorded:
    probe_args, probe_env, probe_out = import_probe(tmp)
    with FakeOpenAIServer() as server:
        models().install(server)
        run = run_pytest(
            [
                *(node(name(i)) for i in IDS),
                *model_args(server.base_url),
                "--tau2-record-mode",
                "once",
                f"--tau2-cassette-dir={tmp / 'cassettes'}",
                *probe_args,
            ],
            tmp,
            env=env(**probe_env),
        )
        return Recorded.of(run, server, probe_records(probe_out))


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "recording_record", _record)


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory, recording: Recorded) -> Recorded:
    return shared_once(tmp_path_factory, "recording_replay", lambda tmp: replay_run(tmp, recording))


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-6000:]}\n--- stderr (tail)\n{run.stderr[-3000:]}"


def outcome(run: PytestRun, task_id: str) -> dict[str, Any]:
    """What must not change between a recording and its replay."""
    scenario = name(task_id)
    metrics = run.metrics(scenario)
    usage = {side: {k: v for k, v in u.items() if k != "replayed_calls"} for side, u in metrics["token_usage"].items()}
    judge_file = run.results_dir / scenario / "judge_result.json"
    return {
        "item": run.outcome_line(scenario),
        "is_successful": metrics["is_successful"],
        "stop_reason": metrics["stop_reason"],
        "agent": metrics["agent"],  # the kind's name, also when --tau2-concurrency built the participants
        "checks": [(c["id"], c["passed"], c.get("message")) for c in metrics["checks"]],
        "transcript": run.transcript(scenario),
        "judge": json.loads(judge_file.read_text("utf-8")).get("verdicts") if judge_file.exists() else None,
        "token_usage": usage,
    }


# ---- the recording ------------------------------------------------------------------------------


def test_the_recording_writes_one_cassette_per_scenario_with_every_call(recording: Recorded) -> None:
    run = recording.run
    assert run.returncode == 1, _debug(run)  # the wrong write fails, as scripted
    assert "tau2: record mode once" in run.stdout
    files = sorted(cassettes(recording).rglob("*.yaml"))
    assert [f.name for f in files] == sorted(f"{name(i)}.yaml" for i in IDS)
    calls = {f.stem: yaml.safe_load(f.read_text("utf-8"))["calls"] for f in files}
    assert sum(len(c) for c in calls.values()) == len(recording.requests)  # every call, nothing else
    sides = [c["side"] for c in calls[name(THREE_ASSERTIONS)]]
    assert sides[0] == "user" and sides[-1] == "judge" and set(sides) == {"agent", "user", "judge"}
    assert recording.handler_errors == []


def test_no_secret_in_any_cassette_or_result(recording: Recorded) -> None:
    for path in cassettes(recording).rglob("*"):
        if path.is_file():
            text = path.read_text("utf-8")
            assert API_KEY not in text and PASSWORD not in text, path
            assert "127.0.0.1" not in text, path  # api_base is transport, never part of a cassette
    files = recording.run.files_text()
    assert API_KEY not in files and PASSWORD not in files


# ---- replaying with the server gone -------------------------------------------------------------------


def test_replay_gives_identical_verdicts_transcripts_and_usage(recording: Recorded, replay: Recorded) -> None:
    assert replay.run.returncode == recording.run.returncode, _debug(replay.run)
    for task_id in IDS:
        assert outcome(replay.run, task_id) == outcome(recording.run, task_id), name(task_id)
    assert replay.run.outcome_line(name(GOLD)) == "PASSED"
    assert replay.run.outcome_line(name(WRONG_WRITE)) == "FAILED"


def test_replay_marks_tokens_and_cost_as_replayed(recording: Recorded, replay: Recorded) -> None:
    for task_id in IDS:
        metrics = replay.run.metrics(name(task_id))
        for side, usage in metrics["token_usage"].items():
            assert usage.get("replayed_calls", 0) == usage["calls"], (task_id, side)
        recorded_calls = recording.run.metrics(name(task_id))["recording"]["recorded_calls"]
        assert metrics["recording"]["mode"] == "none"
        assert metrics["recording"]["replayed_calls"] == recorded_calls
        assert metrics["recording"]["recorded_calls"] == 0
    assert "replayed from cassettes, not spent" in replay.run.summary()
    assert "replayed" not in recording.run.summary()


def test_replay_imports_no_litellm_and_says_so_in_the_header(replay: Recorded) -> None:
    assert replay.probe and not any(record["litellm"] for record in replay.probe), replay.probe
    assert "tau2: record mode none (replay only)" in replay.run.stdout


@pytest.mark.parametrize(
    ("key", "extra"),
    [("recording_replay_n2", ("-p", "xdist", "-n", "2")), ("recording_replay_c4", ("--tau2-concurrency", "4"))],
)
def test_parallel_replays_are_identical(
    tmp_path_factory: pytest.TempPathFactory, recording: Recorded, replay: Recorded, key: str, extra: tuple[str, ...]
) -> None:
    parallel = shared_once(tmp_path_factory, key, lambda tmp: replay_run(tmp, recording, "none", *extra))
    assert parallel.run.returncode == replay.run.returncode, _debug(parallel.run)
    for task_id in IDS:
        assert outcome(parallel.run, task_id) == outcome(replay.run, task_id), name(task_id)


# ---- a changed scenario: a miss ----------------------------------------------------------------------------

CHANGED_INSTRUCTION = "Also ask whether the store is open on Sundays."


def changed_data(root: Path) -> Path:
    """A copy of the tau2 data (retail only) where task 5's user instructions and task 24's assertion differ.

    Copied, not linked: the data loader refuses links that lead out of the data folder.
    """
    others = {"airline", "telecom", "mock"}
    shutil.copytree(DATA_DIR, root, ignore=lambda folder, names: [n for n in names if n in others])
    retail = root / "tau2" / "domains" / "retail"
    tasks = json.loads((DATA_DIR / "tau2" / "domains" / "retail" / "tasks.json").read_text("utf-8"))
    for task in tasks:
        if str(task["id"]) == GOLD:
            instructions = task["user_scenario"]["instructions"]
            instructions["task_instructions"] += " " + CHANGED_INSTRUCTION
        if str(task["id"]) == ONE_ASSERTION:
            task["evaluation_criteria"]["nl_assertions"] = ["The agent greets the customer warmly."]
    (retail / "tasks.json").write_text(json.dumps(tasks), "utf-8")
    return root


def test_a_changed_scenario_is_an_error_with_a_diff_and_the_rest_replays(
    tmp_path: Path, recording: Recorded, replay: Recorded
) -> None:
    data = changed_data(tmp_path / "data")
    changed = replay_run(tmp_path / "run", recording, "none", "--tau2-allow-unpinned-data", TAU2_DATA_DIR=str(data)).run

    assert changed.outcome_line(name(GOLD)) == "ERROR", _debug(changed)
    assert changed.outcome_line(name(ONE_ASSERTION)) == "ERROR", _debug(changed)
    user_miss = f"user call #1 of {name(GOLD)} is not in the cassette"
    assert user_miss in changed.stdout, _debug(changed)
    assert f"+    {CHANGED_INSTRUCTION}" in changed.stdout or CHANGED_INSTRUCTION in _diff_lines(changed.stdout, "+")
    assert f"judge call #1 of {name(ONE_ASSERTION)} is not in the cassette" in changed.stdout
    assert "+  - The agent greets the customer warmly." in changed.stdout or "greets the customer warmly" in (
        _diff_lines(changed.stdout, "+")
    )
    assert "--tau2-record-mode new_episodes" in changed.stdout
    for task_id in (PLAIN, THREE_ASSERTIONS, WRONG_WRITE):  # the rest of the sweep goes on, unchanged
        assert outcome(changed, task_id)["item"] == outcome(replay.run, task_id)["item"], _debug(changed)
        assert changed.transcript(name(task_id)) == replay.run.transcript(name(task_id))


def _diff_lines(text: str, sign: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.startswith(sign))


# ---- new_episodes: only what is missing --------------------------------------------------------------------


def test_new_episodes_calls_the_model_only_for_missing_calls(
    tmp_path: Path, recording: Recorded, replay: Recorded
) -> None:
    copy = tmp_path / "cassettes"
    shutil.copytree(cassettes(recording), copy)
    truncated = copy / "tau2_retail" / f"{name(THREE_ASSERTIONS)}.yaml"
    data = yaml.safe_load(truncated.read_text("utf-8"))
    full = len(data["calls"])
    dropped = data["calls"][-2:]
    data["calls"] = data["calls"][:-2]  # as if the recording had stopped two calls early
    truncated.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    untouched = {p: p.read_bytes() for p in copy.rglob("*.yaml") if p != truncated}

    with FakeOpenAIServer() as server:
        models().install(server)
        run = run_pytest(
            [
                *(node(name(i)) for i in IDS),
                *model_args(server.base_url),
                "--tau2-record-mode",
                "new_episodes",
                f"--tau2-cassette-dir={copy}",
            ],
            tmp_path,
            env=env(),
        )
        requests = server.requests

    assert [r["model"] for r in requests] == [d["request"]["model"].removeprefix("openai/") for d in dropped], _debug(
        run
    )
    assert len(yaml.safe_load(truncated.read_text("utf-8"))["calls"]) == full
    assert {p: p.read_bytes() for p in untouched} == untouched
    for task_id in IDS:
        assert run.outcome_line(name(task_id)) == replay.run.outcome_line(name(task_id)), _debug(run)
    assert run.metrics(name(THREE_ASSERTIONS))["recording"]["recorded_calls"] == 2
