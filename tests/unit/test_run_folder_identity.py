"""The results folder's rules for who ran (resume and merge) and where the model server was."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_tau2.run.run_folder import RunFolder, endpoint_changes, endpoints, fingerprint, resume_refusal
from pytest_tau2.settings import Settings

A1 = "python:my_agent.MyAgent@sha256:aaaaaaaaaaaa"
A2 = "python:my_agent.MyAgent@sha256:bbbbbbbbbbbb"
OTHER = "python:lab.ScriptedAgent@sha256:cccccccccccc"


def _saved(**agents: str) -> dict[str, dict[str, str]]:
    return {folder: {"agent": agent, "user": "scripted"} for folder, agent in agents.items()}


def test_an_item_with_a_saved_result_must_have_that_results_agent() -> None:
    saved = _saved(s1=A1)
    assert resume_refusal(saved, "s1", A1, "scripted", "DIR") is None
    refused = resume_refusal(saved, "s1", A2, "scripted", "DIR")
    assert refused is not None and refused.startswith("--tau2-resume DIR: the saved results were made by the agent")
    assert A1 in refused and A2 in refused
    assert resume_refusal(saved, "s1", "oracle", "scripted", "DIR") is not None  # the override was removed
    assert resume_refusal(_saved(s1="oracle"), "s1", A1, "scripted", "DIR") is not None  # an override was added
    assert resume_refusal(saved, "s1", A1, "litellm:openai/user", "DIR") is not None  # the user changed


def test_an_item_without_one_is_refused_only_for_an_edited_class() -> None:
    saved = _saved(s1=A1)
    assert resume_refusal(saved, "s2", A2, "scripted", "DIR") is not None  # the same class, edited
    assert resume_refusal(saved, "s2", A1, "scripted", "DIR") is None
    assert resume_refusal(saved, "s2", OTHER, "scripted", "DIR") is None  # a conftest's per-scenario agent
    assert resume_refusal({}, "s2", A2, "scripted", None) is None  # not resuming


def test_a_name_saved_before_versions_matches_its_class() -> None:
    assert resume_refusal(_saved(s1="python:my_agent.MyAgent"), "s1", A1, "scripted", "DIR") is None


def test_the_endpoint_is_recorded_beside_the_fingerprint_not_in_it() -> None:
    one = Settings(agent_model="openai/m", agent_args=json.dumps({"api_base": "http://h:1/v1?key=k1", "seed": 1}))
    two = Settings(agent_model="openai/m", agent_args=json.dumps({"api_base": "http://h:2/v1", "seed": 1}))
    assert fingerprint(one) == fingerprint(two)
    assert endpoints(one) == {"agent": "http://h:1/v1?key=***"}
    assert endpoint_changes(endpoints(one), endpoints(two)) == [
        "agent model server: http://h:1/v1?key=*** then, http://h:2/v1 now"
    ]
    assert endpoint_changes(None, {}) == []


def test_run_json_names_the_agents_the_results_name(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", Settings(results_dir=str(tmp_path / "run")))
    folder.open()
    try:
        read = lambda: json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))["fingerprint"]  # noqa: E731
        assert read()["agent"] == "oracle"
        folder.observe(A1, "scripted")
        assert read()["agent"] == A1
        folder.observe(OTHER, "scripted")
        assert read()["agent"] == sorted([A1, OTHER]) and read()["user"] == "scripted"
    finally:
        folder.close()
