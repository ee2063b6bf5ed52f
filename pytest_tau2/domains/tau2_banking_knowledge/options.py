"""banking_knowledge's own options (the retrieval configuration, the embedding and reranker
models), declared here and registered as an option section (``--help``: its group).

Imported at every pytest start (the plugin declares every option): it imports nothing of the
domain, only the settings' types; the retrieval table is read when a run's settings are checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_tau2.errors import SettingsError
from pytest_tau2.settings import Option, OptionSection, register_option_section

if TYPE_CHECKING:
    from pytest_tau2.domains.tau2_banking_knowledge.section import BankingSettings
    from pytest_tau2.settings import Settings


def _view(settings: Settings) -> BankingSettings:
    """The typed options, with the retrieval configuration checked (a sandbox for terminal_use)."""
    from pytest_tau2.domains.tau2_banking_knowledge.retrieval_names import check_retrieval
    from pytest_tau2.domains.tau2_banking_knowledge.section import banking_settings

    typed = banking_settings(settings)
    problem = check_retrieval(typed.retrieval)
    if problem is not None:
        raise SettingsError(problem)
    return typed


BANKING: OptionSection[BankingSettings] = register_option_section(
    OptionSection(
        "banking_knowledge",
        "tau2: banking_knowledge domain (retrieval)",
        (
            Option(
                "retrieval",
                "banking_knowledge retrieval configuration: bm25 (default), no_knowledge, full_kb, golden_retrieval, "
                "grep_only, terminal_use (a shell in a bubblewrap sandbox), openai_embeddings / qwen_embeddings "
                "(dense, litellm embeddings), their *_grep and *_reranker variants, bm25_grep, bm25_reranker "
                "(docs/tau2-banking-knowledge.md).",
                "bm25",
                section="banking_knowledge",
            ),
            Option(
                "embedding_model",
                "litellm embedding model of the dense retrieval configurations (default: the configuration's, "
                "openai/text-embedding-3-large or openrouter/qwen/qwen3-embedding-8b).",
                None,
                section="banking_knowledge",
            ),
            Option(
                "embedding_args",
                "JSON object of litellm arguments for the embedding calls (api_base, ...).",
                None,
                section="banking_knowledge",
            ),
            Option(
                "reranker_model",
                "litellm model of the *_reranker retrieval configurations' LLM reranker (default: openai/gpt-5.2).",
                None,
                section="banking_knowledge",
            ),
            Option(
                "reranker_args",
                "JSON object of litellm arguments for the reranker calls.",
                None,
                section="banking_knowledge",
            ),
        ),
        _view,
    )
)
