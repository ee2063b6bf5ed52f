"""Dense retrieval (``openai_embeddings``, ``qwen_embeddings``) and the LLM reranker (``*_reranker``).

As upstream: every document's content (no title, no chunking) is embedded once; a query is
embedded per search and the documents are ranked by cosine similarity (top 10). Upstream's
models are ``text-embedding-3-large`` (OpenAI) and ``qwen/qwen3-embedding-8b`` (OpenRouter); Qwen
queries, not documents, are prefixed with Qwen's retrieval instruction. Every embedding goes
through litellm (:func:`pytest_tau2.llm.embedding.aembed`), ``--tau2-embedding-model`` and
``--tau2-embedding-args`` override the model and its arguments.

Document embeddings are stored on disk, keyed by the model (and its reply-changing arguments)
and each document's sha256, in ``<cache>/embeddings/<key>.npz`` (``<cache>``: the data fetch's
user cache dir, ``$PYTEST_TAU2_CACHE_DIR``; ``$PYTEST_TAU2_EMBEDDING_CACHE`` names the folder
itself), so a process embeds only documents no earlier run embedded. A run with
``--tau2-record-mode`` also keeps a copy beside its cassettes
(``<cassettes>/tau2_banking_knowledge/embeddings-<key>.npz``), which a replay reads when the
cache is cold: a replayed run needs no server and no key. Query embeddings and reranker calls
are recorded in the scenario's cassette like completions.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_tau2.domains.tau2_banking_knowledge.documents import Document, documents
from pytest_tau2.domains.tau2_banking_knowledge.section import BankingSettings, banking_settings
from pytest_tau2.llm.cassette import CassetteMissError, reply_changing_args
from pytest_tau2.llm.config import ModelConfig
from pytest_tau2.llm.scope import ModelScope, current, run_sync
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    import numpy as np

TOP_K = 10
BATCH = 64
"""Documents per embedding call (upstream sends all in one; the vectors do not depend on it)."""
QWEN_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"
"""Qwen3-Embedding's documented retrieval instruction (a fact of the model card)."""
RERANKER_MODEL = "openai/gpt-5.2"
RERANKER_MIN_SCORE = 5


@dataclass(frozen=True)
class Embedder:
    model: str
    query_instruction: str | None = None

    def query_text(self, query: str) -> str:
        return f"Instruct: {self.query_instruction}\nQuery:{query}" if self.query_instruction else query


EMBEDDERS = {
    "openai": Embedder("openai/text-embedding-3-large"),
    "qwen": Embedder("openrouter/qwen/qwen3-embedding-8b", QWEN_INSTRUCTION),
}


def _banking(scope: ModelScope | None) -> BankingSettings:
    """The run's banking options (the defaults outside a run)."""
    settings = scope.settings if scope is not None else None
    return banking_settings(settings) if isinstance(settings, Settings) else BankingSettings()


def embedding_config(embedder: Embedder, scope: ModelScope | None) -> ModelConfig:
    """``--tau2-embedding-model`` (else the configuration's model) with ``--tau2-embedding-args``."""
    return _banking(scope).embedding_role(embedder.model).config


def reranker_config(scope: ModelScope | None) -> ModelConfig:
    config = _banking(scope).reranker_role(RERANKER_MODEL).config
    if "gpt-5" in config.model and "reasoning_effort" not in config.args:
        config = dataclasses.replace(config, args={**config.args, "reasoning_effort": "low"})  # upstream's for gpt-5
    return config


# ---- the document embeddings on disk ------------------------------------------------------------


def cache_dir() -> Path:
    override = os.environ.get("PYTEST_TAU2_EMBEDDING_CACHE")
    if override:
        return Path(override).expanduser()
    from pytest_tau2.data.resolve import user_cache_dir

    return user_cache_dir() / "embeddings"


def model_key(config: ModelConfig) -> str:
    identity = json.dumps({"model": config.model, "args": reply_changing_args(config)}, sort_keys=True)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", config.model)[-60:]
    return f"{slug}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"


def doc_hash(doc: Document) -> str:
    return hashlib.sha256(doc.content.encode("utf-8")).hexdigest()


def _read_store(path: Path) -> dict[str, np.ndarray]:
    import numpy as np

    if not path.is_file():
        return {}
    try:
        with np.load(path) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError):  # a torn or foreign file: embed again rather than fail
        path.unlink(missing_ok=True)
        return {}


def _write_store(path: Path, vectors: dict[str, np.ndarray]) -> None:
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
    os.close(handle)
    try:
        with open(temp, "wb") as out:
            np.savez(out, **vectors)  # type: ignore[arg-type]  # numpy's stub types **kwds as allow_pickle
        os.replace(temp, path)  # atomic: a concurrent process reads the old file or the new one
    finally:
        Path(temp).unlink(missing_ok=True)


def _cassette_copy(scope: ModelScope | None, key: str) -> Path | None:
    if scope is None or scope.cassette is None:
        return None
    settings = scope.settings
    directory = (settings.cassette_dir if isinstance(settings, Settings) else None) or "cassettes"
    return Path(directory) / "tau2_banking_knowledge" / f"embeddings-{key}.npz"


_LOCK = threading.Lock()


@dataclass
class DenseIndex:
    docs: tuple[Document, ...]
    matrix: np.ndarray
    """One row per document, normalised (cosine similarity is a dot product)."""


_INDEXES: dict[tuple[Path, str], DenseIndex] = {}


def dense_index(folder: Path, config: ModelConfig, scope: ModelScope | None) -> DenseIndex:
    """The documents' embeddings under ``config``: from memory, the disk cache, the cassettes' copy, or the model."""
    import numpy as np

    key = model_key(config)
    with _LOCK:
        found = _INDEXES.get((folder, key))
        if found is not None:
            return found
        docs = documents(folder)
        cache = cache_dir() / f"{key}.npz"
        stored = _read_store(cache)
        copy = _cassette_copy(scope, key)
        if copy is not None and any(doc_hash(d) not in stored for d in docs):
            stored.update(_read_store(copy))
        missing = [d for d in {doc_hash(d): d for d in docs}.values() if doc_hash(d) not in stored]
        if missing:
            cassette = scope.cassette if scope is not None else None
            if cassette is not None and cassette.replay_only:
                raise CassetteMissError(
                    f"{len(missing)} document embeddings of {config.model} are neither in {cache} nor in {copy} "
                    f"(record mode {cassette.mode!r} only replays): record with --tau2-record-mode once or new_episodes"
                )
            from pytest_tau2.llm.embedding import aembed

            retry = scope.retry if scope is not None else None
            for start in range(0, len(missing), BATCH):
                batch = missing[start : start + BATCH]
                vectors = run_sync(aembed(config, [d.content for d in batch], retry=retry, side="embedding-index"))
                stored.update(
                    {doc_hash(d): np.asarray(v, dtype=np.float32) for d, v in zip(batch, vectors, strict=True)}
                )
            _write_store(cache, stored)
        if copy is not None and (missing or not copy.is_file()) and scope is not None and scope.cassette is not None:
            if not scope.cassette.replay_only:
                _write_store(copy, {doc_hash(d): stored[doc_hash(d)] for d in docs})
        matrix = np.vstack([stored[doc_hash(d)] for d in docs]).astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        index = DenseIndex(docs, matrix / np.where(norms == 0, 1, norms))
        _INDEXES[(folder, key)] = index
        return index


def embed_query(embedder: Embedder, query: str, scope: ModelScope | None) -> list[float]:
    from pytest_tau2.llm.embedding import aembed

    config = embedding_config(embedder, scope)
    retry, usage, cassette = (None, None, None) if scope is None else (scope.retry, scope.usage, scope.cassette)
    texts = [embedder.query_text(query)]
    return run_sync(aembed(config, texts, side="embedding", retry=retry, usage=usage, cassette=cassette))[0]


def dense_search(folder: Path, embedder: Embedder, query: str, top_k: int = TOP_K) -> list[tuple[Document, float]]:
    """The ``top_k`` documents nearest ``query`` by cosine similarity (upstream's cosine retriever)."""
    import numpy as np

    if not query or not query.strip():
        raise ValueError("the query is empty: cannot embed blank text")
    scope = current()
    index = dense_index(folder, embedding_config(embedder, scope), scope)
    vector = np.asarray(embed_query(embedder, query, scope), dtype=np.float64)
    norm = np.linalg.norm(vector)
    scores = index.matrix @ (vector / norm) if norm else np.zeros(len(index.docs))
    order = np.argsort(scores)[::-1][: min(top_k, len(index.docs))]
    return [(index.docs[i], float(scores[i])) for i in order]


# ---- the pointwise LLM reranker -----------------------------------------------------------------

RERANK_PROMPT = """Rate how relevant the document is to the query, from 0 to 10.
A relevant document holds information that helps answer or resolve the query; mentioning
related topics without helping does not count. 0: irrelevant. 10: fully answers the query.
Reply with JSON: {{"relevance_score": <integer 0-10>}}.

Query:
<query>
{query}
</query>

Document:
<document>
{document}
</document>"""
"""Our wording of a pointwise relevance prompt (upstream's own text is not copied; its scale,
structured reply and threshold are kept)."""

SCORE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "RelevanceScore",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"relevance_score": {"type": "integer"}},
            "required": ["relevance_score"],
            "additionalProperties": False,
        },
    },
}


def _score(text: str | None) -> int | None:
    try:
        value = json.loads(text or "")["relevance_score"]
    except (ValueError, KeyError, TypeError):
        return None
    return max(0, min(10, int(value))) if isinstance(value, int | float) and not isinstance(value, bool) else None


def rerank(
    query: str, hits: list[tuple[Document, float]], min_score: int = RERANKER_MIN_SCORE
) -> list[tuple[Document, float]]:
    """Each candidate rated 0-10 by the reranker model (one call each, concurrently); those rated
    at least ``min_score`` are kept, best first. A reply that is not a score drops the document (as
    upstream); a call that fails (transport, cassette miss) fails the search."""
    from pytest_tau2.llm.client import acomplete

    if not hits:
        return []
    scope = current()
    config = reranker_config(scope)
    retry, usage, cassette = (None, None, None) if scope is None else (scope.retry, scope.usage, scope.cassette)

    async def rate_all() -> list[int | None]:
        calls = [
            acomplete(
                config,
                [{"role": "user", "content": RERANK_PROMPT.format(query=query, document=doc.content)}],
                response_format=SCORE_FORMAT,
                side="reranker",
                retry=retry,
                usage=usage,
                cassette=cassette,
            )
            for doc, _ in hits
        ]
        return [_score(reply.text) for reply in await asyncio.gather(*calls)]

    scores = run_sync(rate_all())
    rated = [
        (doc, float(score))
        for (doc, _), score in zip(hits, scores, strict=True)
        if score is not None and score >= min_score
    ]
    rated.sort(key=lambda hit: hit[1], reverse=True)
    return rated
