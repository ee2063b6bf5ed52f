"""What ran, named truthfully, on runs whose user (or agent) is a model (both transports):

- a conftest's ``tau2_agent`` is named ``python:<module>.<class>@<version>`` in metrics.json,
  metadata.json, run.json's fingerprint and the summary, and the header names the fixture;
  ``--tau2-resume`` and ``pytest-tau2 merge`` refuse results of the same class edited since
  (before any model call of the resumed run);
- the model server's address is recorded beside the fingerprint, not in it: a resume against a
  server on another port is accepted with a note, a merge of folders with their own servers
  warns and records both.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from pytest_tau2.report.merge import MergeError, merge
from tests.e2e.llm_scripts import PytestRun, ScriptedModels, model_options, run_pytest
from tests.support.fake_openai import FakeOpenAIServer

FIRST, SECOND = "tau2_retail__2", "tau2_retail__5"
AGENT = '''\
from dataclasses import dataclass

from pytest_tau2.conversation.offline import OracleAgent


@dataclass
class MyAgent(OracleAgent):
    """{doc}"""
'''
CONFTEST = """\
import pytest
import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 scenarios)
from my_agent import MyAgent


@pytest.fixture
def tau2_agent(tau2_context):
    return MyAgent(tau2_context.plan)
"""


def _project(tmp: Path, doc: str) -> Path:
    project = tmp / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "pytest.ini").write_text("[pytest]\n", "utf-8")
    (project / "conftest.py").write_text(CONFTEST, "utf-8")
    (project / "test_items.py").write_text("from pytest_tau2 import test_scenario  # noqa: F401\n", "utf-8")
    (project / "my_agent.py").write_text(AGENT.format(doc=doc), "utf-8")
    return project


def _python_agent_run(
    project: Path, tmp: Path, server: FakeOpenAIServer, transport: str, scenarios: str, *where: str
) -> PytestRun:
    return run_pytest(
        ["--tau2-scenarios", scenarios, *model_options(server, sides=("user",)), "--tau2-llm-transport", transport,
         *where],
        tmp,
        cwd=project,
    )  # fmt: skip


def _identity(run: PytestRun, scenario: str) -> str:
    return str(run.metrics(scenario)["agent"])


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_python_agent_is_named_and_an_edited_one_is_refused_by_resume_and_merge(
    tmp_path: Path, transport: str
) -> None:
    project = _project(tmp_path, "Version one.")
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        first = _python_agent_run(project, tmp_path / "one", server, transport, FIRST)
        assert first.returncode == 0, first.output[-3000:]
        name = _identity(first, FIRST)
        assert re.fullmatch(r"python:my_agent\.MyAgent@sha256:[0-9a-f]{12}", name), name
        assert "tau2: agent=tau2_agent fixture in conftest.py user=litellm:openai/user" in first.stdout
        assert f"Agent: {name}; user: litellm:openai/user" in first.stdout
        info = json.loads((first.results_dir / "run.json").read_text("utf-8"))
        assert info["fingerprint"]["agent"] == name  # not "oracle": the agent that ran
        metadata = json.loads((first.results_dir / FIRST / "scenario_config" / "metadata.json").read_text("utf-8"))
        assert metadata["agent"] == name

        # The same class, edited: another agent. Its own run is not merged with the first ...
        (project / "my_agent.py").write_text(AGENT.format(doc="Version two: answers differently."), "utf-8")
        second = _python_agent_run(project, tmp_path / "two", server, transport, SECOND)
        assert second.returncode == 0, second.output[-3000:]
        edited = _identity(second, SECOND)
        assert edited != name and edited.startswith("python:my_agent.MyAgent@sha256:")
        with pytest.raises(MergeError, match=r"run\.json fingerprint") as refused:
            merge([first.results_dir, second.results_dir], tmp_path / "merged")
        assert name in str(refused.value) and edited in str(refused.value)

        # ... and a resume of the first with it is refused before any model call.
        saved = (first.results_dir / FIRST / "metrics.json").read_text("utf-8")
        calls = len(server.requests)
        resumed = _python_agent_run(
            project, tmp_path / "one", server, transport, f"{FIRST},{SECOND}", f"--tau2-resume={first.results_dir}"
        )  # the same folder: run_pytest names it with --tau2-results-dir too
        assert resumed.returncode != 0
        assert len(server.requests) == calls, "the refused resume called the user model"
    assert f"the saved results were made by the agent {name}, this run's agent" in resumed.output
    assert edited in resumed.output, resumed.output[-3000:]
    assert not (first.results_dir / SECOND / "metrics.json").exists()
    assert (first.results_dir / FIRST / "metrics.json").read_text("utf-8") == saved
    assert json.loads((first.results_dir / "run.json").read_text("utf-8"))["fingerprint"]["agent"] == name


def _model_run(tmp: Path, server: FakeOpenAIServer, transport: str, scenarios: str, *where: str) -> PytestRun:
    return run_pytest(
        ["--tau2-scenarios", scenarios, *model_options(server), "--tau2-llm-transport", transport, *where], tmp
    )


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_moved_model_server_is_noted_not_refused(tmp_path: Path, transport: str) -> None:
    with FakeOpenAIServer() as old, FakeOpenAIServer() as new:
        ScriptedModels().install(old)
        ScriptedModels().install(new)
        old_url, new_url = old.base_url, new.base_url
        first = _model_run(tmp_path / "one", old, transport, FIRST)
        second = _model_run(tmp_path / "two", new, transport, SECOND)
        assert first.returncode == 0 and second.returncode == 0, first.output[-2000:] + second.output[-2000:]
        info = json.loads((first.results_dir / "run.json").read_text("utf-8"))
        assert info["endpoints"] == {"agent": old_url, "user": old_url}
        assert "api_base" not in json.dumps(info["fingerprint"])
        assert f"tau2: model servers: agent={old_url} user={old_url}" in first.stdout

        # Two folders, each with its own server: merged, with a warning, both addresses kept.
        merged = merge([first.results_dir, second.results_dir], tmp_path / "merged")
        assert merged.scenarios == 2
        assert any("model servers differ" in w and old_url in w and new_url in w for w in merged.warnings)
        kept = json.loads((tmp_path / "merged" / "run.json").read_text("utf-8"))["endpoints"]
        assert kept["agent"] == sorted([old_url, new_url])

        # The first run resumed against the new server: accepted, noted, the rest run there.
        resumed = _model_run(
            tmp_path / "one", new, transport, f"{FIRST},{SECOND}", f"--tau2-resume={first.results_dir}"
        )  # the same folder: run_pytest names it with --tau2-results-dir too
    assert resumed.returncode == 0, resumed.output[-3000:]
    note = f"agent model server: {old_url} then, {new_url} now"
    assert "tau2: note: the model server moved since the saved run" in resumed.stdout and note in resumed.stdout
    summary = (first.results_dir / "all_summary.txt").read_text("utf-8")
    assert "Note: the model server moved since the saved run" in summary and note in summary
    assert resumed.metrics(FIRST)["resumed"] is True and resumed.metrics(SECOND).get("resumed") is not True
    assert json.loads((first.results_dir / "run.json").read_text("utf-8"))["endpoints"]["agent"] == new_url


def test_python_identity_version_attribute_and_source_hash() -> None:
    from pytest_tau2.report.identity import python_identity, same_identity

    namespace: dict[str, object] = {}
    exec(textwrap.dedent("class Made:\n    pass\n"), namespace)  # no source file: no version
    made = namespace["Made"]
    assert isinstance(made, type)
    assert python_identity(made()) == "python:builtins.Made"

    class Versioned:
        tau2_version = "2.1"

    assert python_identity(Versioned()).endswith("Versioned@2.1")
    tagged = Versioned()
    tagged.tau2_version = "gpt-4.1 prompt v3"  # set by the fixture on the instance
    assert python_identity(tagged).endswith("Versioned@gpt-4.1 prompt v3")
    assert same_identity("python:m.A", "python:m.A@sha256:0123456789ab")  # a name saved before versions
    assert not same_identity("python:m.A@sha256:0123456789ab", "python:m.A@sha256:ba9876543210")


@pytest.mark.parametrize("variable", ["OPENAI_API_BASE", "OPENAI_BASE_URL"])
def test_a_model_server_given_by_the_environment_is_shown_and_recorded(tmp_path: Path, variable: str) -> None:
    """No api_base in the model's arguments: the address the calls go to (the environment's) is
    in the header and run.json, as an api_base would be (issue 38 point 7)."""
    from tests.e2e.llm_scripts import SECRET, subprocess_env

    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        args = json.dumps({"api_key": SECRET})
        sides = [
            w
            for side in ("agent", "user")
            for w in (f"--tau2-{side}-model", f"openai/{side}", f"--tau2-{side}-args", args)
        ]
        run = run_pytest(
            ["--tau2-scenarios", FIRST, *sides], tmp_path, env=subprocess_env(**{variable: server.base_url})
        )
        url = server.base_url
        called = len(server.requests)
    assert run.returncode == 0 and called, run.output[-3000:]
    shown = f"{url} (from {variable})"
    assert f"tau2: model servers: agent={shown} user={shown}" in run.stdout
    info = json.loads((run.results_dir / "run.json").read_text("utf-8"))
    assert info["endpoints"] == {"agent": shown, "user": shown}
    assert url not in json.dumps(info["fingerprint"])
