"""What a model call cost, always by litellm's price list and litellm's pricing rules.

Both live transports price here (:mod:`pytest_tau2.llm.transport_litellm`,
:mod:`pytest_tau2.llm.transport_wire`). The litellm path reads the cost litellm already computed
for the response; the OpenAI wire path (:mod:`pytest_tau2.llm.openai_wire`) hands litellm the
reply body it received. Pricing is litellm's job in both: its rules (the served
model versus the requested one, dated snapshots priced as their family, cached prompt tokens)
are too intricate to copy faithfully, and they keep changing with its price list.

The wire path exists to keep litellm out of a process that does not need it (seconds of import,
~160 MB). So before importing litellm to price a reply, :func:`maybe_priced` asks litellm's
bundled price file, read as plain JSON, whether any price could apply to the names involved; if
no entry is even similar, litellm would find no price either and the cost is ``None`` without
importing it. The check errs towards importing: a name that merely resembles a priced model
(same prefix, or a priced model's name inside it) is priced by litellm itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_tau2.llm import compat_litellm

if TYPE_CHECKING:
    from pytest_tau2.llm.config import ModelConfig

__all__ = ["cost_of_response", "cost_of_wire_reply", "is_priced", "maybe_priced", "price_file_entry"]

PRICE_FILE = "model_prices_and_context_window_backup.json"
"""litellm's bundled price list: what it prices with while ``LITELLM_LOCAL_MODEL_COST_MAP`` is set."""


def cost_of_response(litellm: ModuleType, config: ModelConfig, response: object) -> float | None:
    """The cost of a litellm response in USD, or None when the model is unpriced (never a made-up 0.0).

    litellm already priced the call (custom ``input_cost_per_token`` arguments included) and
    left the figure in the response's hidden params; computing it again costs ~1 ms of CPU per
    call and ignores custom prices.
    """
    hidden = compat_litellm.hidden_params(response)
    cost = hidden.get("response_cost")
    if cost is None and "response_cost" in hidden and not is_priced(litellm, config):
        return None  # litellm found no price; asking again costs ~1.5 ms and finds none either
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:
            return None
    return _checked(litellm, config, cost)


def cost_of_wire_reply(
    config: ModelConfig, body: Mapping[str, object], import_litellm: Callable[[], ModuleType]
) -> float | None:
    """The cost of an OpenAI chat-completion reply body, priced by litellm as its own path prices it.

    ``import_litellm`` is called only when some price might apply (:func:`maybe_priced`), or
    when litellm is imported already (a conftest may have registered custom prices).
    """
    served = body.get("model")
    names = [config.model] + ([served] if isinstance(served, str) and served else [])
    if "litellm" not in sys.modules and not maybe_priced(names):
        return None
    pair = (config.model, str(served))
    if pair in _UNMAPPED:
        return None
    litellm = import_litellm()
    try:
        cost = litellm.completion_cost(completion_response=body, model=config.model)
    except Exception:
        # litellm raises when no price applies; that costs ~1 ms a time, and the answer holds.
        _UNMAPPED.add(pair)
        return None
    return _checked(litellm, config, cost)


_UNMAPPED: set[tuple[str, str]] = set()


def _checked(litellm: ModuleType, config: ModelConfig, cost: Any) -> float | None:
    if cost is None:
        return None
    value = float(cost)
    if value == 0.0 and not is_priced(litellm, config):
        return None
    return value


_PRICED: dict[str, bool] = {}


def is_priced(litellm: ModuleType, config: ModelConfig) -> bool:
    """Whether litellm knows a price for the model, so 0.0 really means free (cached per model)."""
    if "input_cost_per_token" in config.args or "output_cost_per_token" in config.args:
        return True
    if config.model not in _PRICED:
        try:
            info = litellm.get_model_info(model=config.model)
        except Exception:
            _PRICED[config.model] = False
        else:
            _PRICED[config.model] = (
                info.get("input_cost_per_token") is not None or info.get("output_cost_per_token") is not None
            )
    return _PRICED[config.model]


# ---------------------------------------------------------------------------
# The price file, read without importing litellm
# ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _price_file() -> dict[str, Any]:
    """litellm's bundled price list as JSON ({} when litellm is not installed or the file moved)."""
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / PRICE_FILE
        if path.is_file():
            loaded = json.loads(path.read_text("utf-8"))
            return loaded if isinstance(loaded, dict) else {}
    return {}


def price_file_entry(name: str) -> dict[str, Any] | None:
    """The price-file entry under exactly ``name``, if any."""
    entry = _price_file().get(name)
    return entry if isinstance(entry, dict) else None


_TEXT_MODES = ("chat", "completion", "responses")
"""Entries that can price a chat completion (image, audio, video, embedding prices cannot)."""


@lru_cache(maxsize=1)
def _priced_names() -> frozenset[str]:
    """Every priced text entry's name and each of its shorter '/'-tails, lower-cased."""
    names: set[str] = set()
    for key, entry in _price_file().items():
        if isinstance(entry, dict) and entry.get("mode", "chat") in _TEXT_MODES and _has_a_price(entry):
            names.update(_tails(key))
    return frozenset(names)


def _has_a_price(entry: Mapping[str, object]) -> bool:
    return any("cost_per" in field and isinstance(value, (int, float)) and value > 0 for field, value in entry.items())


def _tails(name: str) -> list[str]:
    parts = name.lower().split("/")
    return ["/".join(parts[i:]) for i in range(len(parts))]


@lru_cache(maxsize=256)
def _maybe_priced(names: tuple[str, ...]) -> bool:
    # Unset counts as set: the client sets it before it imports litellm (transport_litellm.import_litellm).
    if not _price_file() or os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "true").lower() != "true":
        return True  # no local list to consult, or litellm prices from its downloaded list: let it decide
    priced = _priced_names()
    for name in names:
        for tail in _tails(name):
            if len(tail) < 3:
                continue
            if any(tail.startswith(known) or known.startswith(tail) for known in priced if len(known) >= 3):
                return True
    return False


def maybe_priced(names: Iterable[str]) -> bool:
    """Whether litellm could find a price for any of these model names (requested or served).

    False only when no priced entry of litellm's price list shares a prefix with any
    '/'-separated tail of the names (case-insensitive): then litellm, whose lookups strip
    providers, dates and versions but never invent a family, has no price either.
    """
    return _maybe_priced(tuple(names))
