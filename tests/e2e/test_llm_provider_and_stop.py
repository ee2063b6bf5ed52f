"""On the model path (the loopback OpenAI server, through the wire path and litellm):

- issue 24.15: a misspelt provider or a bare model name litellm cannot place is one usage error
  before the first scenario, naming the closest providers, and no request is sent;
- issue 24.16: after a fatal stop, the conversations that finished in the background with the
  same error are said to have failed so (a resume runs them again), not to be results.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.llm_scripts import model_options, node, run_pytest, subprocess_env
from tests.support.fake_openai import FakeOpenAIServer, error

RESTAURANT = (
    "restaurant__margherita_for_two",
    "restaurant__menu_question",
    "restaurant__party_order",
    "restaurant__pepperoni_mushrooms",
)


def _with_model(options: list[str], side: str, model: str) -> list[str]:
    flag = f"--tau2-{side}-model"
    at = options.index(flag)
    return [*options[: at + 1], model, *options[at + 2 :]]


@pytest.mark.parametrize("transport", ["auto", "litellm"])
@pytest.mark.parametrize(
    ("side", "model", "expected"),
    [
        ("agent", "opanai/agent", "--tau2-agent-model 'opanai/agent': litellm knows no provider 'opanai'"),
        ("user", "hosted_vlm/user", "--tau2-user-model 'hosted_vlm/user': litellm knows no provider 'hosted_vlm'"),
        ("agent", "my-local-agent", "--tau2-agent-model 'my-local-agent': no provider prefix"),
    ],
    ids=["misspelt-openai", "misspelt-hosted-vllm", "no-prefix"],
)
def test_a_model_string_without_a_known_provider_is_a_usage_error_before_any_scenario(
    tmp_path: Path, transport: str, side: str, model: str, expected: str
) -> None:
    with FakeOpenAIServer() as server:
        options = _with_model(model_options(server), side, model)
        run = run_pytest([node(RESTAURANT[0]), *options, "--tau2-llm-transport", transport], tmp_path)
        assert server.requests == []
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.output[-3000:]
    assert expected in run.stderr, run.stderr
    if "opanai" in model:
        assert "closest: openai" in run.stderr
    if "hosted_vlm" in model:
        assert "hosted_vllm" in run.stderr
    if "no provider prefix" in expected:
        assert f"'openai/{model}'" in run.stderr  # the fix, spelled out
    assert " PASSED" not in run.stdout and " ERROR" not in run.stdout
    assert len([line for line in run.stderr.splitlines() if line.startswith("ERROR: ")]) == 1


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_fatal_stop_says_what_became_of_the_background_conversations(tmp_path: Path, transport: str) -> None:
    """A rejected key (401) is fatal: the run stops at the first item, while --tau2-concurrency has
    already run the others in the background, each rejected the same way."""
    with FakeOpenAIServer(latency_s=0.05) as server:
        server.add_handler("agent", error(401, "Incorrect API key provided"))
        args = [
            *map(node, RESTAURANT),
            *model_options(server, sides=("agent",)),
            "--tau2-concurrency",
            "4",
            "--tau2-llm-transport",
            transport,
        ]
        run = run_pytest(args, tmp_path, env=subprocess_env())
    out = run.stdout
    assert run.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    assert "Interrupted: stopping the run" in out
    assert "--tau2-resume reports them without running them again" not in out, out[-3000:]
    background = [s for s in RESTAURANT[1:] if (run.results_dir / s / "metrics.json").is_file()]
    if background:  # the prefetcher finished them before pytest stopped (the usual case)
        assert (
            f"{len(background)} more scenarios ran in the background and ended in an infrastructure error, "
            "all with the error that stopped the run"
            in out
            or f"{len(background)} more scenarios ran in the background and ended in an infrastructure error, "
            "all with: "
            in out
        ), out[-3000:]
        assert "--tau2-resume runs them again" in out
