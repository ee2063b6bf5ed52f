"""How the banking agent reaches the knowledge base: one configuration per run (``--tau2-retrieval``).

Each configuration is upstream's prompt template (``prompts/<file>.md``, with its
``{{component:NAME}}`` parts filled in) and its retrieval tools:

| name | prompt | tools |
|---|---|---|
| ``no_knowledge`` | ``no_knowledge.md`` | none |
| ``full_kb`` | ``full_kb.md``, every document inlined | none |
| ``golden_retrieval`` | ``required_docs.md``, the task's required documents inlined | none |
| ``grep_only`` | ``grep_only.md`` | ``grep`` (regex, documents ranked by match count, top 10) |
| ``bm25`` | ``classic_rag_bm25_no_grep.md`` | ``KB_search`` (BM25, top 10) |
| ``openai_embeddings``, ``qwen_embeddings`` | ``classic_rag_*_no_grep.md`` | ``KB_search`` (cosine, :mod:`.dense`) |
| ``*_embeddings_grep``, ``bm25_grep`` | ``classic_rag_*.md`` | ``KB_search`` and ``grep`` |
| ``*_reranker``, ``*_reranker_grep`` | as without | ``KB_search``, hits rated 0-10 by an LLM (kept: >= 5) |
| ``terminal_use`` | ``agentic_search.md`` | ``shell`` (a bubblewrap sandbox over the documents, :mod:`.sandbox`) |
| ``terminal_use_write`` | ``agentic_search_write.md`` | ``shell`` over a writable per-scenario copy |
| ``alltools``, ``alltools-qwen`` | ``all_tools.md`` | ``KB_search_bm25``, ``KB_search_dense``, ``shell`` |

BM25 is ``rank_bm25.BM25Okapi`` over each document's content, lower-cased and split on
whitespace (upstream's indexer), so rankings are upstream's; the index is built once per process.
Documents are read in file-name order (upstream globs the folder, whose order is the file
system's; scores do not depend on it, only the order of equal scores and of ``full_kb``'s text).
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import BankTool, schema, text
from pytest_tau2.domains.tau2_banking_knowledge.dense import EMBEDDERS, Embedder, dense_search, rerank
from pytest_tau2.domains.tau2_banking_knowledge.documents import Document, documents
from pytest_tau2.domains.tau2_banking_knowledge.retrieval_names import (
    ALIASES as ALIASES,  # re-exported
)
from pytest_tau2.domains.tau2_banking_knowledge.retrieval_names import (
    NOT_IMPLEMENTED as NOT_IMPLEMENTED,  # re-exported
)
from pytest_tau2.domains.tau2_banking_knowledge.retrieval_names import (
    SANDBOXED as SANDBOXED,  # re-exported
)
from pytest_tau2.domains.tau2_banking_knowledge.retrieval_names import (
    check_retrieval as check_retrieval,  # re-exported
)
from pytest_tau2.domains.tau2_banking_knowledge.sandbox import ShellTool, WritableShellTool
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import Tool

if TYPE_CHECKING:
    from rank_bm25 import BM25Okapi

TOP_K = 10


@dataclass(frozen=True)
class Config:
    name: str
    template: str
    tools: tuple[type[Tool], ...] = ()


BUILD_SECONDS: dict[Path, float] = {}
"""How long building each BM25 index took (bench/results reads it)."""


@functools.cache
def bm25_index(folder: Path) -> BM25Okapi:
    """The BM25 index of the documents, built once per process and folder."""
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    index = BM25Okapi([doc.content.lower().split() for doc in documents(folder)])
    BUILD_SECONDS[folder] = time.perf_counter() - start
    return index


def _listing(hits: list[tuple[Document, float]]) -> str:
    return "\n".join(
        f"{n}. {doc.title}\n   ID: {doc.id}\n   Score: {score:.4f}\n   Content: {doc.content}\n"
        for n, (doc, score) in enumerate(hits, 1)
    )


def bm25_search(folder: Path, query: str, top_k: int = TOP_K) -> list[tuple[Document, float]]:
    if not query or not query.strip():
        return []
    docs = documents(folder)
    scores = bm25_index(folder).get_scores(query.lower().split())
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[: min(top_k, len(docs))]
    return [(docs[i], float(scores[i])) for i in order]


def grep_search(folder: Path, pattern: str, top_k: int = TOP_K) -> list[tuple[Document, float]]:
    if not pattern.strip():
        return []
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error:
        compiled = re.compile(re.escape(pattern), re.IGNORECASE)
    hits = [(doc, float(len(found))) for doc in documents(folder) if (found := compiled.findall(doc.content))]
    hits.sort(key=lambda hit: hit[1], reverse=True)
    return hits[:top_k]


class _Retrieval(BankTool):
    abstract = True

    @property
    def folder(self) -> Path:
        return Path(str(self.state["documents_dir"]))


class KBSearchTool(_Retrieval):
    name = "KB_search"
    description = "Search the knowledge base for documents relevant to a query (BM25)."
    parameters = schema(["query"], query=text("What to look for."))

    def run(self, query: str) -> str:
        hits = bm25_search(self.folder, query)
        return _listing(hits) if hits else "No relevant documents found."


class GrepTool(_Retrieval):
    name = "grep"
    description = "Search every knowledge base document for a regular expression; documents ranked by match count."
    parameters = schema(["pattern"], pattern=text("The regular expression, e.g. 'credit.*card' or 'fee|charge'."))

    def run(self, pattern: str) -> str:
        hits = grep_search(self.folder, pattern)
        return _listing(hits) if hits else f"No matches found for pattern: {pattern}"


CONFIGS: dict[str, Config] = {
    "no_knowledge": Config("no_knowledge", "no_knowledge.md"),
    "full_kb": Config("full_kb", "full_kb.md"),
    "golden_retrieval": Config("golden_retrieval", "required_docs.md"),
    "grep_only": Config("grep_only", "grep_only.md", (GrepTool,)),
    "bm25": Config("bm25", "classic_rag_bm25_no_grep.md", (KBSearchTool,)),
}


class _DenseSearch(_Retrieval):
    """``KB_search`` over dense embeddings (:mod:`.dense`); ``*_reranker`` variants rerank the hits."""

    abstract = True
    name = "KB_search"
    description = "Search the knowledge base for documents relevant to a query (dense embeddings)."
    parameters = schema(["query"], query=text("What to look for."))
    slow = True  # waits on an embedding model: off the event loop
    embedder: Embedder
    reranked: bool = False

    def run(self, query: str) -> str:
        hits = dense_search(self.folder, self.embedder, query)
        if self.reranked:
            hits = rerank(query, hits)
        return _listing(hits) if hits else "No relevant documents found."


class _RerankedBM25(KBSearchTool):
    abstract = True
    slow = True  # waits on the reranker model

    def run(self, query: str) -> str:
        hits = rerank(query, bm25_search(self.folder, query))
        return _listing(hits) if hits else "No relevant documents found."


def _dense_tool(embedder: str, reranked: bool) -> type[Tool]:
    name = f"KBSearch{embedder.title()}{'Reranked' if reranked else ''}Tool"
    return type(name, (_DenseSearch,), {"embedder": EMBEDDERS[embedder], "reranked": reranked, "__module__": __name__})


class KBSearchBM25RerankedTool(_RerankedBM25):
    pass


for _embedder, _template in (("openai", "classic_rag_openai"), ("qwen", "classic_rag_qwen")):
    for _reranked in (False, True):
        _tool = _dense_tool(_embedder, _reranked)
        globals()[_tool.__name__] = _tool
        _name = f"{_embedder}_embeddings{'_reranker' if _reranked else ''}"
        CONFIGS[_name] = Config(_name, f"{_template}_no_grep.md", (_tool,))
        CONFIGS[f"{_name}_grep"] = Config(f"{_name}_grep", f"{_template}.md", (_tool, GrepTool))
CONFIGS["bm25_reranker"] = Config("bm25_reranker", "classic_rag_bm25_no_grep.md", (KBSearchBM25RerankedTool,))
CONFIGS["bm25_grep"] = Config("bm25_grep", "classic_rag_bm25.md", (KBSearchTool, GrepTool))
CONFIGS["bm25_reranker_grep"] = Config(
    "bm25_reranker_grep", "classic_rag_bm25.md", (KBSearchBM25RerankedTool, GrepTool)
)
CONFIGS["terminal_use"] = Config("terminal_use", "agentic_search.md", (ShellTool,))
CONFIGS["terminal_use_write"] = Config("terminal_use_write", "agentic_search_write.md", (WritableShellTool,))


def _top_k(k: object) -> int:
    try:
        value = int(str(k))
    except ValueError:
        raise ValueError(f"k must be a whole number of documents, got {k!r}") from None
    if value < 1:
        raise ValueError(f"k must be at least 1, got {value}")
    return value


_K: JSONObject = {"type": "integer", "description": "Maximum number of documents to return (default 10)."}


class KBSearchBM25AllTool(_Retrieval):
    """``KB_search_bm25`` of ``alltools``: BM25 with the agent's ``k``."""

    name = "KB_search_bm25"
    description = "Search the knowledge base with BM25 (sparse, keyword) retrieval."
    parameters = schema(["query"], query=text("What to look for."), k=_K)

    def run(self, query: str, k: object = TOP_K) -> str:
        hits = bm25_search(self.folder, query, _top_k(k))
        return _listing(hits) if hits else "No relevant documents found."


class _DenseAll(_Retrieval):
    abstract = True
    name = "KB_search_dense"
    description = "Search the knowledge base with dense embedding retrieval."
    parameters = schema(["query"], query=text("What to look for."), k=_K)
    slow = True
    embedder: Embedder

    def run(self, query: str, k: object = TOP_K) -> str:
        hits = dense_search(self.folder, self.embedder, query, _top_k(k))
        return _listing(hits) if hits else "No relevant documents found."


class KBSearchDenseOpenaiAllTool(_DenseAll):
    embedder = EMBEDDERS["openai"]


class KBSearchDenseQwenAllTool(_DenseAll):
    embedder = EMBEDDERS["qwen"]


ALL_TOOLS_DENSE = {
    "alltools": ("OpenAI API", "text-embedding-3-large"),
    "alltools-qwen": ("OpenRouter", "qwen3-embedding-8b"),
}
"""The provider and model the ``all_tools.md`` prompt names for ``KB_search_dense`` (upstream's)."""
CONFIGS["alltools"] = Config("alltools", "all_tools.md", (KBSearchBM25AllTool, KBSearchDenseOpenaiAllTool, ShellTool))
CONFIGS["alltools-qwen"] = Config("alltools-qwen", "all_tools.md",
                                  (KBSearchBM25AllTool, KBSearchDenseQwenAllTool, ShellTool))  # fmt: skip


def _component(prompts: Path, match: re.Match[str]) -> str:
    return (prompts / "components" / f"{match.group(1)}.md").read_text(encoding="utf-8")


def _inline(docs: list[Document]) -> str:
    return "\n\n---\n\n".join(f"## {doc.title}\n\n{doc.content}" for doc in docs)


def agent_prompt(config: Config, prompts: Path, folder: Path, required: list[str] | None) -> str:
    """The agent's system prompt for ``config`` (upstream's template and substitutions)."""
    content = (prompts / config.template).read_text(encoding="utf-8")
    content = re.sub(r"\{\{component:(\w+)\}\}", lambda m: _component(prompts, m), content)
    if config.name in ALL_TOOLS_DENSE:
        provider, model = ALL_TOOLS_DENSE[config.name]
        content = content.replace(  # our wording; upstream fills the same facts
            "{{all_tools_dense_instructions}}",
            f"`KB_search_dense` ranks documents by embeddings of the model `{model}` ({provider}).",
        )
    if config.name == "full_kb":
        content = content.replace("{{full_knowledge_base}}", _inline(list(documents(folder))))
    if config.name == "golden_retrieval":
        by_title = {doc.title: doc for doc in documents(folder)}  # a title match first, then an id (upstream)
        by_id = {doc.id: doc for doc in documents(folder)}
        wanted = [doc for ref in required or [] if (doc := by_title.get(ref) or by_id.get(ref)) is not None]
        content = content.replace("{{required_documents}}", _inline(wanted) if wanted else "(No documents provided)")
    return content
