"""banking_knowledge on the model path (the loopback OpenAI server, through the wire path and
litellm): the agent searches the knowledge base with the configured retrieval tool, unlocks and
calls a discoverable tool with a JSON-string argument, and the result records the retrieval
configuration (metrics.json ``data_pin.retrieval``, run.json's fingerprint)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tau2.domains.tau2_common.prompts import scenario_block
from tests.e2e.llm_scripts import (
    DATA_DIR,
    STOP,
    AgentScript,
    ScriptedModels,
    Tasks,
    UserScript,
    call,
    model_options,
    node,
    run_pytest,
)
from tests.support.fake_openai import FakeOpenAIServer, text

BANK = DATA_DIR / "tau2" / "domains" / "banking_knowledge"
pytestmark = pytest.mark.skipif(not (BANK / "db.json").is_file(), reason=f"no banking_knowledge data under {DATA_DIR}")
TASK = "task_075"  # verify the customer, then open a bank account (a discoverable write)
SCENARIO = f"tau2_banking_knowledge__{TASK}"


def _tasks() -> Tasks:
    by_id = {}
    for path in sorted((BANK / "tasks").glob("task_*.json")):
        task = json.loads(path.read_text("utf-8"))
        by_id[task["id"]] = task
    blocks = {scenario_block(t.get("user_scenario") or {}): i for i, t in by_id.items()}
    return Tasks("banking_knowledge", by_id, blocks)


@pytest.mark.parametrize(("transport", "retrieval", "search"), [
    ("auto", "bm25", ("KB_search", {"query": "open a savings account"})),
    ("litellm", "grep_only", ("grep", {"pattern": "savings"})),
])  # fmt: skip
def test_the_agent_searches_unlocks_and_calls_through_the_model_path(
    tmp_path: Path, transport: str, retrieval: str, search: tuple[str, dict[str, str]]
) -> None:
    models = ScriptedModels(_tasks())
    gold = models.tasks.gold(TASK)
    steps = [call(*search), *(call(a["name"], a["arguments"]) for a in gold), text("Your new account is open.")]
    models.agent[TASK] = AgentScript(steps)
    models.user[TASK] = UserScript([f"[case {TASK}] I would like to open an account.", "Yes, please.",
                                    f"Thanks, that is all. {STOP}"])  # fmt: skip
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [node(SCENARIO), *model_options(server), "--tau2-llm-transport", transport, "--tau2-retrieval", retrieval],
            tmp_path,
        )
    assert run.returncode == 0, run.stdout[-3000:]
    metrics = run.metrics(SCENARIO)
    assert metrics["is_successful"] is True and metrics["db_state_match"] is True
    assert metrics["data_pin"]["retrieval"] == retrieval
    run_json = json.loads((run.results_dir / "run.json").read_text("utf-8"))
    assert run_json["fingerprint"]["retrieval"] == retrieval
    messages = run.transcript(SCENARIO)
    searched = next(m for m in messages if m.get("role") == "tool" and m.get("name") == search[0])
    assert "   ID: doc_" in searched["content"]
    called = [m for m in messages if m.get("role") == "tool" and m.get("name") == "call_discoverable_agent_tool"]
    assert called and called[-1]["content"].startswith("Bank account opened successfully!")
    assert isinstance(next(a for a in gold if a["name"] == "call_discoverable_agent_tool")["arguments"]["arguments"],
                      str)  # fmt: skip
