"""Embedding calls: :func:`aembed` embeds texts through ``litellm.aembedding``, replayed from a cassette.

The embedding twin of :func:`pytest_tau2.llm.client.acomplete`: a cassette that holds the call
(matched on the model, its reply-changing arguments and the texts) answers it without litellm,
a server or a key; otherwise litellm makes it, with the client's retries and errors, and a
recording cassette adds it. Vectors are float32 (what the OpenAI API sends as base64, and
what the cassette stores), so a live run and its replay rank documents alike.
"""

from __future__ import annotations

import asyncio
import struct
import sys
from typing import TYPE_CHECKING, Any

from pytest_tau2.llm.client import _infrastructure_error, _is_retryable
from pytest_tau2.llm.completion import Completion
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.faults import STREAKS, retry_delay
from pytest_tau2.llm.secrets import SecretDict
from pytest_tau2.llm.transport_litellm import import_litellm, imported_litellm

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.llm.usage import UsageMeter

__all__ = ["aembed", "as_float32"]


def as_float32(vector: list[float]) -> list[float]:
    """``vector`` rounded to float32, as a cassette stores it."""
    return list(struct.unpack(f"<{len(vector)}f", struct.pack(f"<{len(vector)}f", *vector)))


async def aembed(
    config: ModelConfig,
    texts: list[str],
    *,
    retry: RetryPolicy | None = None,
    usage: UsageMeter | None = None,
    side: str = "embedding",
    cassette: Cassette | None = None,
) -> list[list[float]]:
    """The embedding of each of ``texts`` (one call), replayed when ``cassette`` holds it."""
    lookup = None
    if cassette is not None:
        lookup = cassette.lookup_embedding(side, config, texts)  # raises a miss in a replay-only mode
        if lookup.vectors is not None:
            if usage is not None and lookup.completion is not None:
                usage.record(side, lookup.completion)  # the recorded tokens, marked replayed
            return lookup.vectors
    policy = retry or RetryPolicy()
    litellm = import_litellm()
    kwargs: dict[str, Any] = SecretDict({"timeout": policy.timeout_s, **config.args})
    kwargs.update(model=config.model, input=list(texts), num_retries=0, max_retries=0, drop_params=True)
    attempts = max(1, policy.max_retries + 1)
    for attempt in range(1, attempts + 1):
        try:
            response = await litellm.aembedding(**kwargs)
        except Exception as exc:
            module = imported_litellm() or sys.modules.get("litellm")
            if not _is_retryable(exc, module) or attempt == attempts:
                raise _infrastructure_error(config, attempt, exc, module) from None
            await asyncio.sleep(retry_delay(policy, attempt, exc))
            continue
        STREAKS.succeeded(config)
        vectors = [as_float32([float(x) for x in _vector(item)]) for item in response.data]
        if len(vectors) != len(texts):
            raise _infrastructure_error(
                config, attempt, ValueError(f"{len(texts)} texts sent, {len(vectors)} vectors back"), None
            )
        tokens = int(getattr(response.usage, "prompt_tokens", 0) or 0) if response.usage else 0
        cost = _cost(litellm, response)
        if usage is not None:
            usage.record(side, _usage(config, tokens, cost))
        if cassette is not None and lookup is not None:
            cassette.record_embedding(lookup, vectors, str(getattr(response, "model", None) or config.model), tokens)
        return vectors
    raise AssertionError("unreachable: the retry loop always returns or raises")


def _vector(item: Any) -> list[float]:
    return list(item["embedding"] if isinstance(item, dict) else item.embedding)


def _cost(litellm: Any, response: Any) -> float | None:
    try:
        return float(litellm.completion_cost(completion_response=response, call_type="aembedding"))
    except Exception:  # an unpriced model (a local server): the spend is unknown, not zero
        return None


def _usage(config: ModelConfig, tokens: int, cost: float | None) -> Completion:
    return Completion(text=None, tool_calls=[], prompt_tokens=tokens, completion_tokens=0, cost=cost,
                      model=config.model, raw={})  # fmt: skip
