"""banking_knowledge's dense retrieval and LLM reranker end to end: a litellm agent searches with
``KB_search`` (embeddings from the loopback server's ``/v1/embeddings``), the documents are
embedded once and then served from the disk cache, and a recorded run replays with the server
stopped and the cache empty (the cassettes hold the query embeddings, the reranker's calls and a
copy of the document embeddings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import (
    STOP,
    AgentScript,
    PytestRun,
    ScriptedModels,
    UserScript,
    call,
    model_options,
    node,
    run_pytest,
    subprocess_env,
)
from tests.e2e.test_banking_knowledge_llm import BANK, SCENARIO, TASK, _tasks
from tests.support.fake_openai import FakeOpenAIServer, text

pytestmark = pytest.mark.skipif(not (BANK / "db.json").is_file(), reason=f"no banking_knowledge data under {BANK}")
QUERY = "open a savings account"


def _rate(request: dict) -> object:
    document = request["messages"][0]["content"].split("<document>")[1]
    return text(json.dumps({"relevance_score": 8 if "saving" in document.lower() else 1}))


def _run(
    tmp: Path, retrieval: str, server: FakeOpenAIServer | None, base: str, mode: str, cache: Path, transport: str
) -> PytestRun:
    models = ScriptedModels(_tasks())
    gold = models.tasks.gold(TASK)
    steps = [call("KB_search", {"query": QUERY}), *(call(a["name"], a["arguments"]) for a in gold)]
    models.agent[TASK] = AgentScript([*steps, text("Your new account is open.")])
    models.user[TASK] = UserScript([f"[case {TASK}] I would like to open an account.", "Yes, please.",
                                    f"Thanks, that is all. {STOP}"])  # fmt: skip
    if server is not None:
        models.install(server)
        server.add_handler("rerank", _rate)
    args = json.dumps({"api_base": base, "api_key": "sk-embed-secret"})
    options = [node(SCENARIO), "--tau2-retrieval", retrieval, "--tau2-embedding-model", "openai/emb",
               "--tau2-embedding-args", args, "--tau2-reranker-model", "openai/rerank", "--tau2-reranker-args", args,
               "--tau2-record-mode", mode, "--tau2-llm-transport", transport,
               "--tau2-cassette-dir", str(tmp.parent / "cassettes")]  # fmt: skip
    if server is not None:
        options += model_options(server)
    else:
        options += ["--tau2-agent-model", "openai/agent", "--tau2-agent-args", args,
                    "--tau2-user-model", "openai/user", "--tau2-user-args", args]  # fmt: skip
    env = {**subprocess_env(), "PYTEST_TAU2_EMBEDDING_CACHE": str(cache)}
    return run_pytest(options, tmp, env=env)


def _search_result(run: PytestRun) -> str:
    messages = run.transcript(SCENARIO)
    return next(m for m in messages if m.get("role") == "tool" and m.get("name") == "KB_search")["content"]


@pytest.mark.parametrize(("retrieval", "transport"), [("openai_embeddings", "litellm"),
                                                     ("openai_embeddings_reranker", "auto")])  # fmt: skip
def test_dense_search_embeds_once_then_replays_with_the_server_stopped(
    tmp_path: Path, retrieval: str, transport: str
) -> None:
    """Chat calls (agent, user, reranker) through litellm, or the wire path (auto); embeddings always litellm."""
    cache = tmp_path / "embedding-cache"
    with FakeOpenAIServer() as server:
        base = server.base_url
        first = _run(tmp_path / "record", retrieval, server, base, "once", cache, transport)
        assert first.returncode == 0, first.stdout[-3000:]
        documents = sum(len(r["input"]) for r in server.embedding_requests[:-1])
        assert documents == len(list((BANK / "documents").glob("*.json")))  # every document, once
        assert server.embedding_requests[-1]["input"] in ([QUERY], QUERY)
        reranked = len(server.requests_for("rerank"))
        assert reranked == (10 if "reranker" in retrieval else 0)  # each of the top 10 rated once
        seen = len(server.embedding_requests)
        second = _run(tmp_path / "cached", retrieval, server, base, "off", cache, transport)
        assert second.returncode == 0, second.stdout[-3000:]
        assert len(server.embedding_requests) == seen + 1  # the cache served the documents: the query alone
    found = _search_result(first)
    assert "   ID: doc_" in found and found == _search_result(second)
    if "reranker" in retrieval:
        assert found.count("   ID: doc_") <= 10 and "Score: 8.0000" in found
    assert first.metrics(SCENARIO)["is_successful"] is True
    cassette = (tmp_path / "cassettes" / "tau2_banking_knowledge" / f"{SCENARIO}.yaml").read_text("utf-8")
    assert "side: embedding" in cassette and "sk-embed-secret" not in cassette
    shutil.rmtree(cache)  # a fresh machine: the committed cassettes only
    replay = _run(tmp_path / "replay", retrieval, None, base, "none", cache, transport)  # the server is stopped
    assert replay.returncode == 0, replay.stdout[-3000:]
    assert _search_result(replay) == found
    assert replay.metrics(SCENARIO)["is_successful"] is True
