"""What a sweep will cost before it is paid for: calls, tokens and USD per side, with a range
(docs/campaigns.md, "Cost estimate").

Each selected trial is estimated from the best source it has, in this order:

1. **a recorded run** (``--tau2-estimate-from DIR``, a results folder): the same scenario's
   ``token_usage`` there, every trial of it; the range is their spread, widened by
   :data:`ONE_SAMPLE_SPREAD` when there is one;
2. **its cassette** (``--tau2-cassette-dir``): the usage of every recorded call, the same widening;
3. **the prompt sizes** (run/estimate_model.py): the agent's and the user's system prompts and
   tool schemas tokenised with the model's tokenizer (litellm's ``token_counter``), the gold
   actions' count and arguments, and a conversation shape whose low/mid/high assumptions are
   stated there.

Cost is tokens times the model's price: ``--tau2-price`` when given, else litellm's price list
(None: unpriced). No pytest here; plugin/estimating.py prints it and writes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tau2.run import participants
from pytest_tau2.run.estimate_model import COUNTS, Figures, prompt_size_estimate
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.trial_ids import trial_id
from pytest_tau2.settings import Settings

__all__ = ["ESTIMATE_FILE", "SIDES", "Estimate", "Figures", "estimate", "expected_cost"]

ESTIMATE_FILE = "tau2-estimate.json"
"""Where ``--tau2-estimate`` writes the estimate when ``--tau2-estimate-file`` is not given."""
SIDES = ("agent", "user", "judge")


@dataclass(frozen=True)
class Total:
    calls: float
    tokens: float
    cost_usd: float | None


@dataclass
class ItemEstimate:
    name: str
    source: str
    """``recorded run``, ``cassette`` or ``prompt sizes``."""
    sides: dict[str, Figures]


@dataclass
class Estimate:
    """The sweep's estimate: per item, and priced totals."""

    items: list[ItemEstimate]
    prices: dict[str, tuple[float, float] | None]
    """Per side, USD per million prompt and completion tokens (None: unpriced or no model)."""

    def totals(self) -> dict[str, Figures]:
        out = {side: Figures() for side in SIDES}
        for item in self.items:
            for side, figures in item.sides.items():
                out.setdefault(side, Figures()).add(figures)
        return out

    def cost(self, side: str, counts: Mapping[str, float]) -> float | None:
        price = self.prices.get(side)
        if price is None:
            return None if counts.get("calls") else 0.0
        return (counts["prompt_tokens"] * price[0] + counts["completion_tokens"] * price[1]) / 1_000_000

    def total(self, level: str) -> Total:
        """Every side together at ``level`` (low, mid or high)."""
        calls = tokens = 0.0
        cost: float | None = 0.0
        for side, figures in self.totals().items():
            counts = getattr(figures, level)
            calls += counts["calls"]
            tokens += counts["prompt_tokens"] + counts["completion_tokens"]
            side_cost = self.cost(side, counts)
            cost = None if cost is None or side_cost is None else cost + side_cost
        return Total(calls, tokens, cost)

    def sources(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for item in self.items:
            found[item.source] = found.get(item.source, 0) + 1
        return found

    def lines(self) -> list[str]:
        """What the terminal shows."""
        sources = ", ".join(f"{n} from {source}" for source, n in sorted(self.sources().items()))
        lines = [f"Estimate of {len(self.items)} scenario runs ({sources}): low / mid / high"]
        for side, figures in self.totals().items():
            if not figures.high["calls"]:
                continue
            parts = [
                f"{name.replace('_', ' ')} {_n(figures.low[name])} / {_n(figures.mid[name])} / {_n(figures.high[name])}"
                for name in COUNTS
            ]
            lines.append(f"  {side}: " + ", ".join(parts))
        low, mid, high = (self.total(level) for level in ("low", "mid", "high"))
        lines.append(
            f"  total: {_n(low.calls)} / {_n(mid.calls)} / {_n(high.calls)} calls, "
            f"{_n(low.tokens)} / {_n(mid.tokens)} / {_n(high.tokens)} tokens, "
            f"cost {_usd(low.cost_usd)} / {_usd(mid.cost_usd)} / {_usd(high.cost_usd)}"
        )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "prices": {side: list(p) if p else None for side, p in self.prices.items()},
            "total": {level: vars(self.total(level)) for level in ("low", "mid", "high")},
            "items": [
                {"name": i.name, "source": i.source, "sides": {s: vars(f) for s, f in i.sides.items()}}
                for i in self.items
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Estimate:
        prices: dict[str, tuple[float, float] | None] = {
            side: (float(p[0]), float(p[1])) if p else None for side, p in (data.get("prices") or {}).items()
        }
        items = [
            ItemEstimate(str(i["name"]), str(i["source"]), {s: Figures(**f) for s, f in (i.get("sides") or {}).items()})
            for i in data.get("items") or []
        ]
        return cls(items, prices)

    def write(self, path: Path) -> None:
        from pytest_tau2.storage.atomic import write_text_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def read(cls, path: Path) -> Estimate:
        return cls.from_dict(json.loads(path.read_text("utf-8")))


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


# ---- sources ---------------------------------------------------------------------------------------


def estimate(settings: Settings, trials: Iterable[tuple[Scenario, int]], recorded: Path | None = None) -> Estimate:
    """The estimate of running each ``(scenario, trial)`` under ``settings``."""
    items = []
    for scenario, trial in trials:
        name = trial_id(scenario.name, trial, settings.trials)
        found = _from_recorded_run(recorded, scenario.name) if recorded is not None else None
        source = "recorded run"
        if found is None:
            found, source = _from_cassette(settings, name), "cassette"
        if found is None:
            found, source = prompt_size_estimate(scenario, settings), "prompt sizes"
        items.append(ItemEstimate(name, source, found))
    return Estimate(items, prices(settings))


def _from_recorded_run(folder: Path, scenario: str) -> dict[str, Figures] | None:
    """Every trial of ``scenario`` in a results folder (``<name>`` or ``<name>-t<k>``)."""
    samples: list[Mapping[str, Any]] = []
    for metrics in [folder / scenario / "metrics.json", *sorted(folder.glob(f"{scenario}-t*/metrics.json"))]:
        try:
            usage = json.loads(metrics.read_text("utf-8")).get("token_usage")
        except (OSError, ValueError):
            continue
        if isinstance(usage, dict) and any(isinstance(u, dict) and u.get("calls") for u in usage.values()):
            samples.append(usage)
    if not samples:
        return None
    return {side: Figures.of_samples([dict(s.get(side) or {}) for s in samples]) for side in SIDES}


def _from_cassette(settings: Settings, name: str) -> dict[str, Figures] | None:
    if not participants.uses_llm(settings):
        return None
    from pytest_tau2.llm.cassette import cassette_path
    from pytest_tau2.llm.cassette_file import load

    path = cassette_path(settings.cassette_dir or "cassettes", name)
    try:
        calls = load(path) if path.is_file() else []
    except Exception:  # an unreadable cassette: its run says so; the estimate falls back
        return None
    if not calls:
        return None
    totals: dict[str, dict[str, float]] = {side: dict.fromkeys(COUNTS, 0.0) for side in SIDES}
    for call in calls:
        if "input" in call.request:  # an embedding call: not a chat side
            continue
        usage = call.reply.get("usage") or {}
        side = totals.setdefault(call.side, dict.fromkeys(COUNTS, 0.0))
        side["calls"] += 1
        side["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
        side["completion_tokens"] += int(usage.get("completion_tokens") or 0)
    return {side: Figures.of_samples([counts]) for side, counts in totals.items()}


def prices(settings: Settings) -> dict[str, tuple[float, float] | None]:
    """Per side, USD per million prompt/completion tokens: ``--tau2-price``, else litellm's list."""
    out: dict[str, tuple[float, float] | None] = {}
    for side in SIDES:
        role = settings.roles.first(side)
        out[side] = None if role is None else role.price or _listed_price(role.model)
    return out


def _listed_price(model: str) -> tuple[float, float] | None:
    from pytest_tau2.llm.pricing import maybe_priced

    if not maybe_priced([model]):
        return None
    from pytest_tau2.llm.transport_litellm import import_litellm

    try:
        info = import_litellm().get_model_info(model=model)
    except Exception:
        return None
    rate_in, rate_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if rate_in is None and rate_out is None:
        return None
    return (float(rate_in or 0) * 1_000_000, float(rate_out or 0) * 1_000_000)


def expected_cost(settings: Settings, scenario_for: Callable[[str], Scenario]) -> Callable[[str], float | None]:
    """For the run budget: the mid cost of one conversation by item id, from its cassette or prompt
    sizes (None when the models are unpriced or the scenario cannot be estimated)."""
    from pytest_tau2.run.trial import parse_item_id

    def expected(item: str) -> float | None:
        try:
            name, trial = parse_item_id(item, settings.trials)
            found = estimate(settings, [(scenario_for(name), trial)])
        except Exception:  # no prior: the budget counts on the conversations finished so far
            return None
        return found.total("mid").cost_usd

    return expected
