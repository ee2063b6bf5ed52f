"""banking_knowledge's dense retrieval and LLM reranker through litellm against the loopback
server: ranking, the on-disk embedding cache, and record/replay with the server stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tau2.domains.tau2_banking_knowledge import dense
from pytest_tau2.domains.tau2_banking_knowledge.retrieval import CONFIGS, check_retrieval
from pytest_tau2.domains.tau2_banking_knowledge.sandbox import sandbox_problem as problem
from pytest_tau2.llm.cassette import Cassette, CassetteMissError
from pytest_tau2.llm.config import RetryPolicy
from pytest_tau2.llm.scope import SCOPE, ModelScope
from pytest_tau2.settings import Settings
from tests.support.fake_openai import FakeOpenAIServer, text

DOCS = {
    "doc_fees": ("Card fees", "The credit card annual fee is waived for gold members. Card fee schedule."),
    "doc_loans": ("Loans", "Personal loan rates depend on your credit score and loan term."),
    "doc_atm": ("ATMs", "Withdraw cash at any ATM in the network without an ATM surcharge."),
}


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "documents"
    folder.mkdir()
    for doc_id, (title, content) in DOCS.items():
        (folder / f"{doc_id}.json").write_text(json.dumps({"id": doc_id, "title": title, "content": content}))
    monkeypatch.setenv("PYTEST_TAU2_EMBEDDING_CACHE", str(tmp_path / "cache"))
    dense._INDEXES.clear()
    return folder


def _scope(server: FakeOpenAIServer | None, cassette: Cassette | None, cassettes: Path) -> ModelScope:
    args = json.dumps({"api_base": server.base_url if server else "http://127.0.0.1:9/v1", "api_key": "sk-test"})
    models = {"embedding_model": "openai/emb", "reranker_model": "openai/rerank"}
    settings = Settings(cassette_dir=str(cassettes), sections={**models, "embedding_args": args, "reranker_args": args})
    return ModelScope(cassette, RetryPolicy(max_retries=0, timeout_s=10), None, settings)


def _search(kb: Path, scope: ModelScope, query: str, embedder: str = "openai") -> list[str]:
    token = SCOPE.set(scope)
    try:
        return [doc.id for doc, _ in dense.dense_search(kb, dense.EMBEDDERS[embedder], query)]
    finally:
        SCOPE.reset(token)


def _inputs(server: FakeOpenAIServer) -> list[list[str]]:
    return [r["input"] if isinstance(r["input"], list) else [r["input"]] for r in server.embedding_requests]


def test_dense_search_ranks_by_similarity_through_litellm(kb: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        assert _search(kb, _scope(server, None, tmp_path), "credit card fee")[0] == "doc_fees"
        assert _search(kb, _scope(server, None, tmp_path), "atm cash surcharge")[0] == "doc_atm"
        calls = _inputs(server)
    assert sorted(calls[0]) == sorted(c for _, c in DOCS.values())  # the documents: once, content only
    assert calls[1:] == [["credit card fee"], ["atm cash surcharge"]]  # one query embedding per search
    assert all(r["model"] == "emb" for r in server.embedding_requests)


def test_qwen_queries_carry_the_instruction_documents_do_not(kb: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        _search(kb, _scope(server, None, tmp_path), "loan rates", embedder="qwen")
        calls = _inputs(server)
    assert not any(c.startswith("Instruct:") for c in calls[0])
    assert calls[1] == [f"Instruct: {dense.QWEN_INSTRUCTION}\nQuery:loan rates"]


def test_document_embeddings_are_cached_on_disk(kb: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        first = _search(kb, _scope(server, None, tmp_path), "credit score loan")
        dense._INDEXES.clear()  # a new process: only the disk cache remains
        second = _search(kb, _scope(server, None, tmp_path), "credit score loan")
        calls = _inputs(server)
    assert first == second and first[0] == "doc_loans"
    assert len(calls[0]) == len(DOCS)  # the documents, embedded by the first run only
    assert calls[1:] == [["credit score loan"], ["credit score loan"]]  # the second run sent its query alone
    assert list((tmp_path / "cache").glob("openai_emb-*.npz")), "the cache file is where the docs say"


def test_record_then_replay_with_the_server_stopped(kb: Path, tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    with FakeOpenAIServer() as server:
        recording = Cassette.open(cassettes, "tau2_banking_knowledge__task_001", "once")
        live = _search(kb, _scope(server, recording, cassettes), "gold card annual fee")
        recording.save()
    assert list((cassettes / "tau2_banking_knowledge").glob("embeddings-openai_emb-*.npz"))
    for cached in (tmp_path / "cache").glob("*.npz"):
        cached.unlink()  # a fresh machine: only the committed cassettes
    dense._INDEXES.clear()
    replay = Cassette.open(cassettes, "tau2_banking_knowledge__task_001", "none")
    assert _search(kb, _scope(None, replay, cassettes), "gold card annual fee") == live
    assert replay.replayed_calls == 1 and replay.new_calls == 0
    with pytest.raises(CassetteMissError):
        _search(kb, _scope(None, replay, cassettes), "a query never recorded")


def _score_by_words(request: dict) -> object:
    prompt = request["messages"][0]["content"]
    return text(json.dumps({"relevance_score": 9 if "fee" in prompt.split("<document>")[1] else 2}))


def test_reranker_keeps_what_the_model_rates_relevant_and_replays(kb: Path, tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    with FakeOpenAIServer() as server:
        server.add_handler("rerank", _score_by_words)
        recording = Cassette.open(cassettes, "tau2_banking_knowledge__task_002", "once")
        scope = _scope(server, recording, cassettes)
        token = SCOPE.set(scope)
        try:
            hits = dense.rerank("card fee", [(d, 0.0) for d in dense.documents(kb)])
        finally:
            SCOPE.reset(token)
        recording.save()
        assert len(server.requests_for("rerank")) == 3
        assert server.requests_for("rerank")[0]["response_format"]["json_schema"]["name"] == "RelevanceScore"
    assert [(d.id, s) for d, s in hits] == [("doc_fees", 9.0)]
    replay = Cassette.open(cassettes, "tau2_banking_knowledge__task_002", "none")
    token = SCOPE.set(_scope(None, replay, cassettes))
    try:
        again = dense.rerank("card fee", [(d, 0.0) for d in dense.documents(kb)])
    finally:
        SCOPE.reset(token)
    assert again == hits and replay.replayed_calls == 3


def test_every_upstream_configuration_name_is_offered() -> None:
    upstream = ("no_knowledge", "full_kb", "golden_retrieval", "qwen_embeddings_grep", "openai_embeddings_grep",
                "qwen_embeddings_reranker_grep", "openai_embeddings_reranker_grep", "bm25_grep", "bm25_reranker_grep",
                "qwen_embeddings", "openai_embeddings", "qwen_embeddings_reranker", "openai_embeddings_reranker",
                "bm25", "bm25_reranker", "grep_only", "terminal_use", "terminal_use_write", "alltools",
                "alltools-qwen")  # fmt: skip
    assert sorted(CONFIGS) == sorted(upstream)
    for name in upstream:
        assert check_retrieval(name) in (None, *(f"--tau2-retrieval {name} needs a sandbox: {p}" for p in [problem()]))
    unknown = check_retrieval("colbert")
    assert unknown is not None and unknown.startswith("--tau2-retrieval must be one of no_knowledge, ")


def test_the_agent_chooses_how_many_dense_hits(kb: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        token = SCOPE.set(_scope(server, None, tmp_path))
        try:
            hits = dense.dense_search(kb, dense.EMBEDDERS["openai"], "credit", top_k=2)
        finally:
            SCOPE.reset(token)
    assert len(hits) == 2 and hits[0][1] >= hits[1][1]


def test_the_fingerprint_names_an_overridden_embedding_or_reranker_model() -> None:
    from pytest_tau2.run.run_folder import fingerprint
    from pytest_tau2.settings import Settings

    default = fingerprint(Settings(sections={"retrieval": "openai_embeddings"}))
    assert "embedding_model" not in default and default["retrieval"] == "openai_embeddings"
    chosen = fingerprint(
        Settings(sections={"retrieval": "bm25_reranker", "embedding_model": "openai/emb", "reranker_model": "openai/r"})
    )
    assert (chosen["embedding_model"], chosen["reranker_model"]) == ("openai/emb", "openai/r")


def test_a_failing_embedding_call_errors_the_scenario_not_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_TAU2_EMBEDDING_CACHE", str(tmp_path / "cache"))
    from pytest_tau2.domains import tau2_sources  # noqa: F401
    from pytest_tau2.errors import InfrastructureError
    from pytest_tau2.run import seeding
    from pytest_tau2.scenario.registry import all_scenarios
    from pytest_tau2.settings import Settings

    data = Path(__import__("os").environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
    if not (data / "tau2" / "domains" / "banking_knowledge" / "documents").is_dir():
        pytest.skip("no banking_knowledge data")
    settings = Settings(data_dir=str(data), sections={"retrieval": "openai_embeddings"})
    scenario = all_scenarios(settings)["tau2_banking_knowledge__task_001"]().bind(settings)
    env = seeding.prepare(scenario, settings).envs["agent"]
    assert not env.runs_inline("KB_search")  # it waits on a model: off the event loop
    token = SCOPE.set(_scope(None, Cassette.open(tmp_path / "none", "tau2_banking_knowledge__task_001", "none"),
                             tmp_path / "none"))  # fmt: skip
    try:
        with pytest.raises(InfrastructureError, match="document embeddings of openai/emb"):
            env.call("KB_search", {"query": "fees"})
    finally:
        SCOPE.reset(token)


def test_the_names_every_run_checks_are_the_configurations_retrieval_builds() -> None:
    """retrieval_names.py lists the configurations without importing them (every run checks its
    settings); retrieval.py builds them: the same names, in the same order."""
    from pytest_tau2.domains.tau2_banking_knowledge import retrieval_names

    assert retrieval_names.NAMES == tuple(CONFIGS)
    assert retrieval_names.SANDBOXED <= set(CONFIGS)
