"""What a model call is configured with: the model and its arguments, and how failures are retried.

A leaf of :mod:`pytest_tau2.llm`: every other module of the package (the client, the
transports, pricing, faults, the cassette) reads these settings, so they live where importing
them pulls in nothing else of the package (only :mod:`pytest_tau2.llm.secrets`, to mask
credentials when a config is printed).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.llm.secrets import mask_args, mask_json_text, secret_items

__all__ = ["TRANSPORTS", "ModelConfig", "RetryPolicy", "transport_of"]


@dataclass(frozen=True)
class ModelConfig:
    """A litellm model string plus the keyword arguments passed to ``acompletion``.

    ``args`` carries api_base, api_key, temperature, seed, reasoning_effort,
    timeout, ... verbatim.
    """

    model: str
    args: dict[str, Any] = field(default_factory=dict)
    price: tuple[float, float] | None = None
    """USD per million prompt and completion tokens given by ``--tau2-price``: prices every call
    of this model in place of litellm's price list (llm/prices.py)."""

    @classmethod
    def from_option(cls, model: str | None, args_json: str | None, *, option_name: str) -> ModelConfig | None:
        """Build a config from a ``--<option>`` model and its JSON-object args string.

        Returns ``None`` when neither is given.  Raises ``ValueError`` naming
        ``option_name`` and the offending text when the args are not a JSON
        object, or when args come without a model.
        """
        has_args = args_json is not None and args_json.strip() != ""
        if model is None or not model.strip():
            if has_args:
                raise ValueError(
                    f"{option_name}: model arguments {mask_json_text(args_json or '')!r} were given "
                    f"but no model; pass a litellm model string such as 'openai/gpt-4o-mini'"
                )
            if model is not None:
                raise ValueError(f"{option_name}: the model name is empty")
            return None
        return cls(
            model=model.strip(),
            args=_parse_args(args_json, option_name) if has_args else {},
        )

    def __repr__(self) -> str:
        # What tracebacks (also with ``pytest -l``) and JUnit files show: credentials masked.
        priced = f", price={self.price!r}" if self.price is not None else ""
        return f"ModelConfig(model={self.model!r}, args={mask_args(self.args)!r}{priced})"

    def secrets(self) -> list[str]:
        """String values of credential-like arguments (used by :func:`~pytest_tau2.llm.secrets.redact`)."""
        return [value for _, value in secret_items(self.args)]

    def safe_dict(self) -> dict[str, Any]:
        """``{"model", "args"}`` with credential arguments masked, for metrics files."""
        return {"model": self.model, "args": mask_args(self.args)}


def _parse_args(args_json: str | None, option_name: str) -> dict[str, Any]:
    text = args_json or ""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{option_name}: expected a JSON object such as '{{\"temperature\": 0}}', "
            f"got invalid JSON {mask_json_text(text)!r} ({exc.msg} at position {exc.pos})"
        ) from None
    if not isinstance(parsed, dict):
        # ValueError, not TypeError: it is bad option text, like invalid JSON.
        raise ValueError(
            f"{option_name}: expected a JSON object such as '{{\"temperature\": 0}}', "
            f"got {type(parsed).__name__} {mask_json_text(text)!r}"
        )
    return parsed


@dataclass
class RetryPolicy:
    """How :func:`~pytest_tau2.llm.client.acomplete` retries transport failures (429, 5xx, timeouts, resets)."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    timeout_s: float = 120.0  # per call, not for all attempts together
    transport: str | None = None
    """``auto`` (the OpenAI wire path where it equals litellm's, else litellm) or ``litellm``;
    None reads ``$TAU2_LLM_TRANSPORT``, default ``auto`` (docs/speed.md)."""
    max_connections: int | None = None
    """Calls in flight at once per model endpoint in this process (None: no cap until the provider
    refuses; llm/ratelimit.py lowers it while the provider refuses either way)."""
    rpm: float | None = None
    """Requests per minute per model endpoint in this process (None: no bucket)."""
    tpm: float | None = None
    """Tokens per minute per model endpoint in this process (None: no bucket)."""
    rate_limit_timeout_s: float = 120.0
    """How long a call waits out refusals (429, 503 with Retry-After) before it gives up; when no
    call to the endpoint got through in that time, the run stops."""

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))


TRANSPORTS = ("auto", "litellm")
"""The values of ``--tau2-llm-transport`` / ``$TAU2_LLM_TRANSPORT``: which live transports may take a call."""


def transport_of(policy: RetryPolicy) -> str:
    """The transport choice in force: the policy's, else ``$TAU2_LLM_TRANSPORT``, else ``auto``."""
    chosen = policy.transport or os.environ.get("TAU2_LLM_TRANSPORT") or "auto"
    if chosen not in TRANSPORTS:
        raise ValueError(f"LLM transport {chosen!r} is not one of {', '.join(TRANSPORTS)} (--tau2-llm-transport)")
    return chosen
