"""The banking_knowledge options of a run, typed: :class:`BankingSettings` (made once per Settings).

Read by the dense retrieval (its embedding and reranker models) and by the option section
(options.py, which also checks the retrieval configuration); a leaf of the domain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_tau2.errors import SettingsError
from pytest_tau2.settings.roles import ModelRole, model_role, parse_price_option

if TYPE_CHECKING:
    from pytest_tau2.settings import Settings


@dataclass(frozen=True)
class BankingSettings:
    """The banking_knowledge options of a run, typed once: ``banking_settings(settings)`` (``BANKING.of``: checked)."""

    retrieval: str = "bm25"
    """The retrieval configuration as given (an alias such as ``AllTools`` included)."""
    embedding: ModelRole | None = None
    """``--tau2-embedding-model`` with its arguments (None: the configuration's own model)."""
    embedding_args: dict[str, Any] = field(default_factory=dict)
    """``--tau2-embedding-args``, parsed (they apply to the configuration's model too)."""
    reranker: ModelRole | None = None
    reranker_args: dict[str, Any] = field(default_factory=dict)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    def embedding_role(self, default_model: str) -> ModelRole:
        """The embedding model of a dense configuration: the one given, else ``default_model``."""
        return self.embedding or self._role("embedding", default_model, self.embedding_args)

    def reranker_role(self, default_model: str) -> ModelRole:
        return self.reranker or self._role("reranker", default_model, self.reranker_args)

    def _role(self, role: str, model: str, args: dict[str, Any]) -> ModelRole:
        made = model_role(role, model, json.dumps(args) if args else None, self.prices)
        assert made is not None
        return made


def banking_settings(settings: Settings) -> BankingSettings:
    """The run's banking options, typed (once per Settings); a SettingsError naming the option."""
    return settings.cached("banking_knowledge", lambda: _typed(settings))


def _typed(settings: Settings) -> BankingSettings:
    retrieval = str(settings.option("retrieval") or "bm25")
    try:
        prices = parse_price_option(settings.price)
        roles = {}
        for role in ("embedding", "reranker"):
            model, args = settings.option(f"{role}_model"), settings.option(f"{role}_args")
            args_text = args if isinstance(args, str) else None
            parsed = model_role(role, "x", args_text, {})  # the arguments alone (they may come without a model)
            given = model_role(role, model, args_text, prices) if isinstance(model, str) and model else None
            roles[role] = (given, parsed.args if parsed is not None else {})
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    (embedding, embedding_args), (reranker, reranker_args) = roles["embedding"], roles["reranker"]
    return BankingSettings(retrieval, embedding, embedding_args, reranker, reranker_args, prices)
