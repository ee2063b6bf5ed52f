"""Credentials in URL query strings are masked wherever a URL is shown or saved: a bot URL with
``?token=`` (``--tau2-agent-url``) and a model ``api_base`` with ``?api-key=``, on a run whose
user is a model (both transports) and whose judge is reached through the keyed URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tau2.bot.server import BotServer
from tests.e2e.llm_scripts import ScriptedModels, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer

SCENARIO = "tau2_retail__2"
TOKEN = "wstok-5d41402abc4b2a76"
QUERY_KEY = "qk-7c6a180b36896a0a"
SAVED = ("metrics.json", "scenario_config/metadata.json")
RUN_FILES = ("all_metrics.json", "run.json", "all_summary.txt", "report.html")


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_query_credentials_are_masked_in_every_file_and_the_terminal(
    reference_bot: BotServer, tmp_path: Path, transport: str
) -> None:
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        user = json.dumps({"api_base": server.base_url, "api_key": "none"})
        judge = json.dumps({"api_base": f"{server.base_url}?api-version=1&api-key={QUERY_KEY}", "api_key": "none"})
        run = run_pytest(
            [
                node(SCENARIO),
                *("--tau2-agent-url", f"{reference_bot.url}/agent?lang=en&token={TOKEN}"),
                *("--tau2-user-model", "openai/user", "--tau2-user-args", user),
                *("--tau2-judge-model", "openai/judge", "--tau2-judge-args", judge),
                *("--tau2-llm-transport", transport),
            ],
            tmp_path,
        )
        spoke = server.requests_for("user")
        base_url = server.base_url
    assert spoke, run.output[-3000:]  # the user model spoke: the conversation ran
    # The judge was called at its keyed URL; the fake server refuses the path, and the error
    # that quotes it back is masked too.
    assert "no route for POST /v1" in run.output and "api-key=***" in run.output, run.output[-3000:]
    folder = run.results_dir / SCENARIO
    for relative in SAVED:
        assert (folder / relative).is_file(), relative
    for name in RUN_FILES:
        assert (run.results_dir / name).is_file(), name
    everything = run.files_text() + run.output
    assert TOKEN not in everything and QUERY_KEY not in everything
    metrics = run.metrics(SCENARIO)
    assert metrics["agent"] == f"websocket:{reference_bot.url}/agent?lang=en&token=***"
    assert metrics["models"]["judge"]["args"]["api_base"] == f"{base_url}?api-version=1&api-key=***"
    assert f"tau2: agent=websocket:{reference_bot.url}/agent?lang=en&token=***" in run.stdout
    fingerprint = json.loads((run.results_dir / "run.json").read_text("utf-8"))["fingerprint"]
    assert fingerprint["agent"] == metrics["agent"]
    assert "token=***" in (run.results_dir / "report.html").read_text("utf-8")
    assert "api-key=***" in run.properties(SCENARIO)["infrastructure_error"]  # junit.xml: the judge's error
