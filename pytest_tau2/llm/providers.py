"""Whether a model string names a provider litellm knows, before the first scenario.

litellm reads the provider from the part of the model string before the first ``/``
(``openai/gpt-4.1``, ``anthropic/claude-...``, ``hosted_vllm/...``), or infers it for names it
knows (``gpt-4.1``). A misspelt provider (``opanai/gpt-4.1``) or a bare name it cannot place
failed in every scenario, one five-line error each; :func:`provider_problem` finds it once, as a
usage error naming the option and litellm's closest provider names (``litellm.provider_list``).

The OpenAI wire path's models (``openai/...``, a bare OpenAI chat model name) need no litellm
import to be told apart; any other model goes through litellm, which is then imported here
instead of at the first call. A package's own transport (``register_transport``) may take models
litellm does not know: with one registered, the provider is not checked.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

BUILTIN_TRANSPORTS = frozenset({"cassette", "wire", "litellm"})


def provider_problem(model: str, args: Mapping[str, object], option: str) -> str | None:
    """Why ``model`` cannot be called (one line naming ``option``), or None."""
    from pytest_tau2.llm.pricing import price_file_entry
    from pytest_tau2.llm.transport import transports

    if args.get("custom_llm_provider") or any(t.name not in BUILTIN_TRANSPORTS for t in transports()):
        return None  # the provider is named in the arguments, or another transport may take the model
    prefix, slash, rest = model.partition("/")
    if slash and prefix == "openai" and rest:
        return None
    if not slash:
        entry = price_file_entry(model)
        if entry is not None and entry.get("litellm_provider"):
            return None  # a name litellm's price file places (gpt-4.1, claude-...)
    import litellm

    providers = sorted({str(getattr(p, "value", p)) for p in litellm.provider_list})
    if slash:
        if prefix in providers:
            return None
        close = difflib.get_close_matches(prefix, providers, n=3, cutoff=0.6)
        hint = f"; closest: {', '.join(close)}" if close else "; litellm's providers: litellm.provider_list"
        return f"{option} {model!r}: litellm knows no provider {prefix!r} (the part before the first '/'){hint}"
    try:
        litellm.get_llm_provider(model=model, api_base=args.get("api_base"))
    except Exception:  # litellm's own BadRequestError: it cannot place the name
        return (
            f"{option} {model!r}: no provider prefix, and litellm cannot tell this model's provider: "
            f"write '<provider>/{model}', e.g. 'openai/{model}' for an OpenAI-compatible server "
            "(its address as api_base in the model's --tau2-*-args)"
        )
    return None
