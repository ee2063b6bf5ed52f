"""banking_knowledge retrieval configurations: upstream's rankings, each configuration's prompt
and tools, refusals of the configurations this port does not offer, and the index built once.

``tau2_banking_retrieval_upstream.json`` holds the rankings upstream's BM25 and grep pipelines
gave at the pin (``bench/upstream_facts/retrieval_facts.py``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources  # noqa: F401
from pytest_tau2.domains.tau2_banking_knowledge import retrieval
from pytest_tau2.errors import SettingsError
from pytest_tau2.run import participants, seeding
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
BANK = DATA_DIR / "tau2" / "domains" / "banking_knowledge"
DOCS = BANK / "documents"
if not (BANK / "db.json").is_file():
    pytest.skip(f"no tau2 banking_knowledge data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

UPSTREAM = json.loads(Path(__file__).with_name("tau2_banking_retrieval_upstream.json").read_text(encoding="utf-8"))


def scenario(retrieval_name: str, task: str = "task_001", tmp: Path | None = None) -> Any:
    settings = Settings(data_dir=str(DATA_DIR), sections={"retrieval": retrieval_name}, prompts="seed")
    return all_scenarios(settings)[f"tau2_banking_knowledge__{task}"]().bind(settings), settings


@pytest.mark.parametrize("query", sorted(UPSTREAM["bm25"]))
def test_bm25_rankings_and_scores_are_upstreams(query: str) -> None:
    ours = [[doc.id, round(score, 6)] for doc, score in retrieval.bm25_search(DOCS, query)]
    assert [d for d, _ in ours] == [d for d, _ in UPSTREAM["bm25"][query]]
    assert [s for _, s in ours] == pytest.approx([s for _, s in UPSTREAM["bm25"][query]], abs=1e-5)


@pytest.mark.parametrize("pattern", sorted(UPSTREAM["grep"]))
def test_grep_rankings_are_upstreams_up_to_the_order_of_equal_scores(pattern: str) -> None:
    """Equal match counts are common, and upstream orders them by the folder's listing order (the
    file system's); the port reads documents in file-name order. Scores rank for rank are equal,
    and each document either side lists has that score."""
    ours = retrieval.grep_search(DOCS, pattern)
    theirs = UPSTREAM["grep"][pattern]
    assert [s for _, s in ours] == [s for _, s in theirs]
    every = {doc.id: score for doc, score in retrieval.grep_search(DOCS, pattern, top_k=10_000)}
    assert all(every[doc_id] == score for doc_id, score in theirs)
    tops = {score for _, score in theirs[:-1]} - {theirs[-1][1]} if theirs else set()
    for score in tops:  # a score group wholly inside the top 10: the same documents
        assert {d.id for d, s in ours if s == score} == {d for d, s in theirs if s == score}


def test_bm25_index_is_built_once_per_process() -> None:
    first = retrieval.bm25_index(DOCS)
    retrieval.bm25_search(DOCS, "fee")
    assert retrieval.bm25_index(DOCS) is first
    assert retrieval.bm25_index.cache_info().misses <= 1 + retrieval.bm25_index.cache_info().currsize
    assert retrieval.BUILD_SECONDS[DOCS] > 0


EXPECTED_TOOLS = {
    "no_knowledge": [], "full_kb": [], "golden_retrieval": [], "grep_only": ["grep"], "bm25": ["KB_search"],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED_TOOLS))
def test_each_configuration_has_its_prompt_and_tools(name: str) -> None:
    bound, settings = scenario(name)
    prompt = bound.get_agent_prompt()
    assert "{{" not in prompt  # every component and placeholder filled
    header = (BANK / "prompts" / "components" / "policy_header.md").read_text(encoding="utf-8").strip()
    assert header[:200] in prompt
    envs = seeding.prepare(bound, settings).envs
    names = [t["function"]["name"] for t in envs["agent"].schemas()]
    assert names[:14] == [cls.name for cls in bound.agent_tool_classes[:14]]
    assert names[14:] == [*EXPECTED_TOOLS[name], "EndConversationTool"]
    assert bound.data_pin(settings)["retrieval"] == name
    titles = [doc.title for doc in retrieval.documents(DOCS)]
    if name == "full_kb":
        assert all(f"## {t}\n\n" in prompt for t in titles)
    elif name == "golden_retrieval":
        required = bound.task["required_documents"]
        by_id = {doc.id: doc for doc in retrieval.documents(DOCS)}
        assert required and all(f"## {by_id[r].title}\n\n{by_id[r].content}" in prompt for r in required)
        assert sum(f"## {t}\n\n" in prompt for t in set(titles)) == len(required)
    else:
        assert not any(f"## {t}\n\n" in prompt for t in titles[:50])


def test_search_tools_answer_through_the_tool_surface() -> None:
    bound, settings = scenario("bm25")
    env = seeding.prepare(bound, settings).envs["agent"]
    result = env.call("KB_search", {"query": "how do I dispute a debit card charge"})
    first = UPSTREAM["bm25"]["how do I dispute a debit card charge"][0]
    assert (
        not result.error
        and result.content.startswith("1. ")
        and f"   ID: {first[0]}\n   Score: {first[1]:.4f}" in result.content
    )
    assert env.call("KB_search", {"query": "   "}).content == "No relevant documents found."
    bound, settings = scenario("grep_only")
    env = seeding.prepare(bound, settings).envs["agent"]
    assert env.call("grep", {"pattern": "zzqqxx-nothing"}).content == "No matches found for pattern: zzqqxx-nothing"
    assert re.search(r"^1\. .+\n   ID: doc_", env.call("grep", {"pattern": "fee|charge"}).content)


@pytest.mark.parametrize("name", ["bm99", "colbert"])
def test_other_configurations_are_refused_in_one_line(name: str) -> None:
    settings = Settings(data_dir=str(DATA_DIR), sections={"retrieval": name}, prompts="seed")
    with pytest.raises(SettingsError) as caught:
        participants.validate_settings(settings)
    message = str(caught.value)
    assert "\n" not in message and name in message and "bm25" in message and "openai_embeddings" in message
