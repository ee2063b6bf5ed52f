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

Reading that file (3.5 MB of JSON) and listing its priced names costs ~50 ms, in every process of
every run; the answer for a set of names is therefore remembered in the user cache
(``price-check-v1.json``) with the file's identity (device, inode, size, modification and change
times, as data/hash_cache.py does for the data files): a later process with the same litellm
reuses it without reading the file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import orjson

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
def _price_file_path() -> Path | None:
    """Where litellm's bundled price list is (None when litellm is not installed or the file moved)."""
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / PRICE_FILE
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=1)
def _price_file() -> dict[str, Any]:
    """litellm's bundled price list as JSON ({} when litellm is not installed or the file moved)."""
    path = _price_file_path()
    if path is None:
        return {}
    raw = path.read_bytes()  # ~3.5 MB: orjson reads it in 17 ms, the stdlib in 28 ms
    try:
        loaded = orjson.loads(raw)
    except orjson.JSONDecodeError:  # NaN or Infinity, which only the stdlib accepts
        loaded = json.loads(raw)
    return loaded if isinstance(loaded, dict) else {}


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
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "true").lower() != "true":
        return True  # litellm prices from its downloaded list: let it decide
    path = _price_file_path()
    if path is None:
        return True  # no local list to consult
    key = "\n".join(names)
    remembered = _remembered(path, key)
    if remembered is not None:
        return remembered
    answer = _check_names(names)
    _remember(path, key, answer)
    return answer


CHECK_CACHE = "price-check-v1.json"
"""The user-cache file of :func:`maybe_priced`'s answers, by price file and its identity."""


def _check_cache() -> Path | None:
    try:
        from pytest_tau2.data.resolve import user_cache_dir

        return user_cache_dir() / CHECK_CACHE
    except Exception:  # no home, platformdirs failing: check every time
        return None


def _identity(path: Path) -> list[int]:
    stat = os.stat(path)
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def _remembered(path: Path, key: str) -> bool | None:
    """The answer remembered for ``key`` with this very price file, if any (never fails)."""
    cache = _check_cache()
    try:
        entry = json.loads(cache.read_text("utf-8")).get(str(path)) if cache is not None else None
        if isinstance(entry, dict) and entry.get("identity") == _identity(path):
            answer = entry.get("answers", {}).get(key)
            return answer if isinstance(answer, bool) else None
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _remember(path: Path, key: str, answer: bool) -> None:
    """Add ``answer`` to the cache (atomically; a price file changed in the last 2 s is not
    remembered, as its identity may not have settled). Never fails."""
    cache = _check_cache()
    if cache is None:
        return
    try:
        identity = _identity(path)
        if time.time_ns() - max(identity[3], identity[4]) <= 2_000_000_000:
            return
        try:
            known = json.loads(cache.read_text("utf-8"))
        except (OSError, ValueError):
            known = {}
        entry = known.get(str(path)) if isinstance(known, dict) else None
        if not isinstance(entry, dict) or entry.get("identity") != identity:
            entry = {"identity": identity, "answers": {}}
        entry["answers"][key] = answer
        known = {str(path): entry}  # one litellm per cache: an older install's answers are dropped
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{cache.name}.", dir=cache.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(known, fh)
            os.replace(tmp, cache)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, TypeError, AttributeError):
        pass


def _check_names(names: tuple[str, ...]) -> bool:
    if not _price_file():
        return True  # an unreadable list: let litellm decide
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
