"""``--tau2-prompts upstream`` (the default) on the model path: the first request of the agent and
of the simulated user, as the loopback OpenAI server received them through litellm and the wire
path, equal what upstream tau2 sends at the pin. Two references, neither holding upstream's prose:
the tau2 view file (``agent_view.json``, generated from upstream's code), read here at run time as
the product reads it, and the sha256 of the first requests upstream's own ``tau2 run`` sent to the
same scripted server (``tau2_first_requests_upstream.json``, written by
bench/bench_upstream_first_requests.py): equal digests mean equal bytes, key order included.

And the tau2 reward stops where upstream stops: a banking customer who opens with ``###STOP###``
ends the conversation at once under ``upstream``; under ``seed`` the agent's closing turn may not
do the task (its writes are refused) and the reward is scored on the conversation up to the stop.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import DATA_DIR, STOP, call, model_options, node, run_pytest, subprocess_env
from tests.support.fake_openai import FakeOpenAIServer, Reply, text

FIXTURE = Path(__file__).with_name("tau2_first_requests_upstream.json")
VIEW = Path(os.environ.get("TAU2_VIEW_FILE") or DATA_DIR.resolve().parent / "tau2-view" / "agent_view.json")
# Upstream's telecom user tool set_apn_settings has six optional fields in its own order; a view file
# written with sorted keys (the shared one) cannot hold it, so that request is equal in content only.
# A view from `pytest-tau2 data view` keeps upstream's order: then it is equal byte for byte too.
DERIVED = VIEW.is_file() and str(json.loads(VIEW.read_text("utf-8")).get("generated_by", "")).startswith("pytest-tau2")
KEY_ORDER_GAP = set() if DERIVED else {("telecom", "user")}
VIEW_ENV = {"TAU2_VIEW_FILE": str(VIEW)} if os.environ.get("TAU2_VIEW_FILE") else {}
pytestmark = pytest.mark.skipif(not VIEW.is_file(), reason=f"no tau2 view file at {VIEW} (set TAU2_VIEW_FILE)")

SCENARIOS = {  # domain -> (scenario, task file)
    "retail": ("tau2_retail__0", None),
    "airline": ("tau2_airline__0", None),
    "mock": ("tau2_mock__create_task_1", None),
    "banking_knowledge": ("tau2_banking_knowledge__task_001", "tasks/task_001.json"),
}


def _view() -> dict[str, Any]:
    return dict(json.loads(VIEW.read_text("utf-8")))


def _task(domain: str, scenario: str, task_file: str | None) -> dict[str, Any]:
    folder = DATA_DIR / "tau2" / "domains" / domain
    if task_file:
        return dict(json.loads((folder / task_file).read_text("utf-8")))
    task_id = scenario.split("__", 1)[1]
    return next(t for t in json.loads((folder / "tasks.json").read_text("utf-8")) if str(t["id"]) == task_id)


def _telecom() -> tuple[str, dict[str, Any]]:
    """The first base telecom task, and its scenario name (as the registry names it)."""
    import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 domains)
    from pytest_tau2.scenario.registry import all_scenarios
    from pytest_tau2.settings import Settings

    settings = Settings(data_dir=str(DATA_DIR), results_dir="unused")
    name = next(n for n in all_scenarios(settings) if n.startswith("tau2_telecom__"))
    scenario = all_scenarios(settings)[name]().bind(settings)
    return name, dict(scenario.task)


def _user_reply(request: dict[str, Any]) -> Reply:
    said = sum(1 for m in request["messages"] if m.get("role") == "assistant")
    return text("Hello, I need some help with my account, please." if said == 0 else f"Thanks, bye. {STOP}")


def _digest(request: dict[str, Any]) -> str:
    """As bench/bench_upstream_first_requests.py hashes a request: its messages and tools as received."""
    body = {"messages": request.get("messages"), "tools": request.get("tools")}
    return hashlib.sha256(json.dumps(body, ensure_ascii=False).encode("utf-8")).hexdigest()


def _first(requests: list[dict[str, Any]], model: str, system: Any) -> dict[str, Any]:
    for request in requests:
        messages = request.get("messages") or []
        if request.get("model", "").endswith(model) and messages and system(messages[0].get("content")):
            return request
    raise AssertionError(f"no {model} request with the expected system prompt")


def test_first_requests_of_agent_and_user_equal_upstreams(tmp_path: Path) -> None:
    view = _view()
    digests = json.loads(FIXTURE.read_text("utf-8"))["domains"]
    greeting = "Hi! How can I help you today?"  # the fixed opening turn (shared tau2-reference 5.2)
    telecom_name, telecom_task = _telecom()
    cases = {d: (name, _task(d, name, f)) for d, (name, f) in SCENARIOS.items()} | {
        "telecom": (telecom_name, telecom_task)
    }
    with FakeOpenAIServer() as server:
        server.add_handler("agent", text("I can help with that."))
        server.add_handler("user", _user_reply)
        run = run_pytest(
            [*(node(name) for name, _ in cases.values()), *model_options(server), "--tau2-prompts", "upstream"],
            tmp_path,
            env=subprocess_env(**VIEW_ENV),
        )
        requests = server.requests
    assert "prompts=seed" not in run.output, run.output[-2000:]
    for domain, (name, task) in cases.items():
        expected = view["domains"][domain]
        agent = _first(requests, "agent", lambda s, e=expected: s == e["agent_system_prompt"])
        opening = "Hello, I need some help with my account, please."
        assert agent["messages"] == [
            {"role": "system", "content": expected["agent_system_prompt"]},
            {"role": "assistant", "content": greeting},
            {"role": "user", "content": opening},
        ], domain
        assert agent["tools"] == expected["tools"], domain  # names, descriptions, parameters, order
        assert "EndConversationTool" not in json.dumps(agent["tools"])

        granted = task.get("user_tools")
        wanted = [t for t in expected["user_tools"] if granted is None or t["function"]["name"] in granted]
        user = _first(
            requests,
            "user",
            lambda s, n=name: s == (run.results_dir / n / "scenario_config" / "user_prompt.txt").read_text("utf-8"),
        )
        system = user["messages"][0]["content"]
        head = view["user_system_prompt_template"].split("{instructions}")[0]
        guidelines = view["user_guidelines"]["tools" if wanted else "plain"]
        assert system.startswith(head.format(global_user_sim_guidelines_with_persona=guidelines)), domain
        assert user["messages"][1:] == [{"role": "user", "content": greeting}], domain
        assert user.get("tools", []) == wanted, domain
        # Byte for byte what upstream's tau2 run sent (key order included): the recorded digests.
        upstream = digests[domain]
        assert upstream["scenario"] == name, domain
        assert _digest(agent) == upstream["agent"], f"{domain}: the agent's first request is not upstream's"
        if (domain, "user") not in KEY_ORDER_GAP:
            assert _digest(user) == upstream["user"], f"{domain}: the user's first request is not upstream's"
        saved = run.results_dir / name / "scenario_config"  # what the run says it sent
        assert json.loads((saved / "tools.json").read_text("utf-8"))["agent"] == expected["tools"], domain
        assert (saved / "agent_prompt.txt").read_text("utf-8") == expected["agent_system_prompt"], domain
        metrics = run.metrics(name)
        assert metrics["data_pin"]["prompts"] == (
            "upstream (banking discoverable tools ours)"  # a view without them: said in the results
            if domain == "banking_knowledge" and "discoverable_tools" not in expected
            else "upstream"
        ), domain
        assert metrics["stop_reason"] == "user_stop" and metrics["clean_exit"] is True, domain
    run_json = json.loads((run.results_dir / "run.json").read_text("utf-8"))
    assert run_json["fingerprint"]["prompts"] == "upstream"
    assert "Prompts: upstream" in run.summary()


BANK = "tau2_banking_knowledge__task_075"  # DB basis; the gold verifies, unlocks and calls a discoverable write


@pytest.mark.parametrize("prompts", ["upstream", "seed"])
def test_a_customer_who_opens_with_stop_gets_upstreams_reward(tmp_path: Path, prompts: str) -> None:
    task = _task("banking_knowledge", BANK, "tasks/task_075.json")
    gold = [a for a in task["evaluation_criteria"]["actions"] if a.get("requestor", "assistant") == "assistant"]
    with FakeOpenAIServer() as server:
        # The agent would do the whole task in its closing turn, one gold call per step, then say goodbye.
        server.add_handler(
            "agent",
            lambda request: (
                call(gold[n]["name"], gold[n]["arguments"])
                if (n := sum(1 for m in request["messages"] if m.get("role") == "tool")) < len(gold)
                else text("Goodbye!")
            ),
        )
        server.add_handler("user", text(f"Never mind. {STOP}"))
        run = run_pytest([node(BANK), *model_options(server), "--tau2-prompts", prompts], tmp_path)
        agent_requests = [r for r in server.requests if r.get("model", "").endswith("agent")]
    metrics = run.metrics(BANK)
    # Upstream: the user's stop ends the conversation; the DB is untouched, so the DB basis fails.
    assert metrics["tau2_reward"] == 0.0, metrics
    assert metrics["tau2_reward_breakdown"] == {"DB": 0.0}
    messages = run.transcript(BANK)
    if prompts == "upstream":
        assert not agent_requests and metrics["stop_reason"] == "user_stop" and metrics["clean_exit"] is True
        assert [m["role"] for m in messages] == ["assistant", "user"]
    else:
        refused = [m for m in messages if m.get("role") == "tool" and m.get("closing_turn")]
        writes = [a["name"] for a in gold if a["name"] != "unlock_discoverable_agent_tool"]
        assert [m["name"] for m in refused if m["name"] in writes] == writes
        assert all(m["error"] for m in refused)
        assert metrics["data_pin"]["prompts"] == "seed"
