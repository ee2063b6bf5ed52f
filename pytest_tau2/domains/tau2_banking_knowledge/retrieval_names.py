"""The banking_knowledge retrieval configurations by name, and the check of the one a run chose.

Every run checks its settings, so this check must not import the configurations themselves
(:mod:`.retrieval`: the BM25, dense and sandbox tools, ~40 ms): the names are listed here, and
:mod:`.retrieval` builds its table in this order (a test holds the two equal).
"""

from __future__ import annotations

NAMES: tuple[str, ...] = (
    "no_knowledge",
    "full_kb",
    "golden_retrieval",
    "grep_only",
    "bm25",
    *(
        f"{model}_embeddings{rerank}{grep}"
        for model in ("openai", "qwen")
        for rerank in ("", "_reranker")
        for grep in ("", "_grep")
    ),
    "bm25_reranker",
    "bm25_grep",
    "bm25_reranker_grep",
    "terminal_use",
    "terminal_use_write",
    "alltools",
    "alltools-qwen",
)
"""Every configuration this port offers, in the order ``--help`` and the errors list them."""
SANDBOXED = frozenset({"terminal_use", "terminal_use_write", "alltools", "alltools-qwen"})
"""The configurations whose tools run a shell in a bubblewrap sandbox."""
NOT_IMPLEMENTED: dict[str, str] = {}
"""Upstream configurations this port does not offer yet, and what they need (none at the pin)."""
ALIASES = {"AllTools": "alltools"}
"""Upstream's alternative spellings."""


def check_retrieval(name: str) -> str | None:
    """None when ``name`` is a configuration this port offers, else the one-line reason."""
    name = ALIASES.get(name, name)
    if name in SANDBOXED:
        from pytest_tau2.domains.tau2_banking_knowledge.sandbox import sandbox_problem

        problem = sandbox_problem()
        return None if problem is None else f"--tau2-retrieval {name} needs a sandbox: {problem}"
    if name in NAMES:
        return None
    if name in NOT_IMPLEMENTED:
        return (f"--tau2-retrieval {name}: not available in this port (it needs {NOT_IMPLEMENTED[name]}); "
                f"choose one of {', '.join(NAMES)}")  # fmt: skip
    return f"--tau2-retrieval must be one of {', '.join(NAMES)}, got {name!r}"
