"""Fault matrix, cassettes (files users commit and CI trusts): crafted or tampered files.

A sweep is recorded once (``--tau2-record-mode once``, models behind the loopback fake server),
then replayed (``none``) with four cassettes changed: a "billion laughs" of YAML aliases (a few
hundred bytes that unfold into billions of strings when walked), a reply whose ``usage`` is not
a number, one whose ``usage`` is a list, and a tool call without an ``id``. Each is an error of
its scenario naming the file and the call, the run ends promptly, the untouched scenario
replays, and items run == JUnit testcases == all_metrics.json entries. See docs/faults.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.fault_matrix import assert_counts_agree
from tests.e2e.llm_scripts import (
    SECRET,
    PytestRun,
    Recorded,
    ScriptedModels,
    model_options,
    node,
    run_pytest,
    shared_once,
)
from tests.support.fake_openai import FakeOpenAIServer

BOMB, USAGE_TEXT, USAGE_LIST, NO_ID, PLAIN = "0", "1", "5", "6", "7"
TASKS = (BOMB, USAGE_TEXT, USAGE_LIST, NO_ID, PLAIN)


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _cassette(folder: Path, task_id: str) -> Path:
    return folder / "tau2_retail" / f"{retail(task_id)}.yaml"


def _record(tmp: Path) -> Recorded:
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        args = [
            *(node(retail(t)) for t in TASKS),
            *model_options(server),
            "--tau2-record-mode",
            "once",
            f"--tau2-cassette-dir={tmp / 'cassettes'}",
        ]
        return Recorded.of(run_pytest(args, tmp), server)


def _first_tool_reply(data: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in data["calls"] if c["side"] == "agent" and c["reply"].get("tool_calls"))


def _tamper(folder: Path) -> dict[str, int]:
    """Change four cassettes in place; returns the call number each change is in."""
    where: dict[str, int] = {}
    for task_id in (USAGE_TEXT, USAGE_LIST, NO_ID):
        path = _cassette(folder, task_id)
        data = yaml.safe_load(path.read_text("utf-8"))
        call = _first_tool_reply(data)
        if task_id == USAGE_TEXT:
            call["reply"]["usage"]["prompt_tokens"] = "many"
        elif task_id == USAGE_LIST:
            call["reply"]["usage"] = ["x"]
        else:
            del call["reply"]["tool_calls"][0]["id"]
        where[task_id] = int(call["n"])
        path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    path = _cassette(folder, BOMB)
    data = yaml.safe_load(path.read_text("utf-8"))
    laughs: Any = ["lol"] * 9
    for _ in range(8):
        laughs = [laughs] * 9  # the same list nine times: the dumper writes anchors and aliases
    data["calls"][0]["reply"]["content"] = laughs
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return where


def _replay(tmp: Path, recorded: Recorded) -> tuple[PytestRun, dict[str, int]]:
    folder = recorded.run.results_dir.parent / "cassettes"
    where = _tamper(folder)
    args = [
        *(node(retail(t)) for t in TASKS),
        *model_options_for(recorded.base_url),
        "--tau2-record-mode",
        "none",
        f"--tau2-cassette-dir={folder}",
    ]
    return run_pytest(args, tmp, timeout=120), where


def model_options_for(base_url: str) -> list[str]:
    """The recording's model options (the server is gone: a replay in mode none calls nothing)."""
    args = json.dumps({"api_base": base_url, "api_key": SECRET})
    return [
        opt
        for side in ("agent", "user")
        for opt in (f"--tau2-{side}-model", f"openai/{side}", f"--tau2-{side}-args", args)
    ]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[PytestRun, dict[str, int], Path]:
    recorded = shared_once(tmp_path_factory, "faults_cassettes_record", _record)
    assert recorded.run.returncode == 0, recorded.run.stdout[-3000:]
    run, where = _replay(tmp_path_factory.mktemp("faults_cassettes_replay"), recorded)
    return run, where, recorded.run.results_dir.parent / "cassettes"


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-5000:]}\n--- stderr\n{run.stderr[-2000:]}"


def _error(run: PytestRun, task_id: str) -> str:
    return str(run.metrics(retail(task_id)).get("infrastructure_error") or "") or run.stdout


def test_an_alias_bomb_is_refused_naming_the_file(replayed: tuple[PytestRun, dict[str, int], Path]) -> None:
    run, _, folder = replayed
    # Refused, not expanded: the bomb would not end (run_pytest's own timeout is 240 s); a nested run
    # took up to ~50 s on a loaded 2-core machine, so the bound only has to tell the two apart.
    assert run.wall_s < 150, _debug(run)
    assert run.outcome_line(retail(BOMB)) == "ERROR", _debug(run)
    assert f"cassette {_cassette(folder, BOMB)}: uses YAML aliases" in run.stdout, _debug(run)


@pytest.mark.parametrize(
    ("task_id", "needle"),
    [
        (USAGE_TEXT, "reply usage 'prompt_tokens' must be a whole number of tokens or null, found 'many'"),
        (USAGE_LIST, "reply 'usage' must be a mapping of token counts, found list"),
        (NO_ID, "tool call 1 needs a string 'id', found nothing"),
    ],
    ids=["usage-text", "usage-list", "tool-call-without-id"],
)
def test_a_tampered_reply_is_a_cassette_error_naming_the_file_and_call(
    replayed: tuple[PytestRun, dict[str, int], Path], task_id: str, needle: str
) -> None:
    run, where, folder = replayed
    assert run.outcome_line(retail(task_id)) == "ERROR", _debug(run)
    expected = f"cassette {_cassette(folder, task_id)}: call n={where[task_id]} is malformed ("
    assert expected in run.stdout and needle in run.stdout, _debug(run)
    for raw in ("ValueError: invalid literal", "AttributeError", "KeyError: 'id'"):
        assert raw not in run.stdout, _debug(run)


def test_the_untouched_cassette_replays_and_the_counts_agree(
    replayed: tuple[PytestRun, dict[str, int], Path],
) -> None:
    run, _, _ = replayed
    assert run.outcome_line(retail(PLAIN)) == "PASSED", _debug(run)
    assert "INTERNALERROR" not in run.output
    assert_counts_agree(run, [retail(t) for t in TASKS])
