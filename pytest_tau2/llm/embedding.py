"""Embedding calls: :func:`aembed` embeds texts through ``litellm.aembedding``, replayed from a cassette.

The embedding twin of :func:`pytest_tau2.llm.client.acomplete`: a cassette that holds the call
(matched on the model, its reply-changing arguments and the texts) answers it without litellm,
a server or a key; otherwise litellm makes it, with the client's retries and errors, and a
recording cassette adds it. Vectors are float32 (what the OpenAI API sends as base64, and
what the cassette stores), so a live run and its replay rank documents alike.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from pytest_tau2.llm.client import _infrastructure_error, within_limits
from pytest_tau2.llm.completion import Completion
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.secrets import SecretDict
from pytest_tau2.llm.transport_litellm import import_litellm

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

    def prompt_tokens(response: Any) -> float:
        return float(getattr(response.usage, "prompt_tokens", 0) or 0) if response.usage else 0.0

    # Within the endpoint's limits, retried as a chat completion is (llm/client.py).
    estimated = max(1.0, sum(len(t) for t in texts) / 4)
    response = await within_limits(config, policy, estimated, lambda: litellm.aembedding(**kwargs), prompt_tokens)
    vectors = [as_float32([float(x) for x in _vector(item)]) for item in response.data]
    if len(vectors) != len(texts):
        raise _infrastructure_error(
            config, 1, ValueError(f"{len(texts)} texts sent, {len(vectors)} vectors back"), None
        )
    tokens = int(prompt_tokens(response))
    cost = _cost(litellm, response)
    if usage is not None:
        usage.record(side, _usage(config, tokens, cost))
    if cassette is not None and lookup is not None:
        cassette.record_embedding(lookup, vectors, str(getattr(response, "model", None) or config.model), tokens)
    return vectors


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
