"""LLM access for pytest-tau2: the only package that talks to litellm.

Importing this package imports none of its modules (the settings read :mod:`.secrets` at every
pytest start, in projects that never call a model); the names below are imported when first
used. litellm itself is imported on the first call to :func:`acomplete` that needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_tau2.llm.client import Completion, ToolCallRequest, aclose, acomplete, preload, redact
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy
    from pytest_tau2.llm.usage import STANDARD_SIDES, SideUsage, UsageMeter

_LAZY = {
    **dict.fromkeys(("Completion", "ToolCallRequest", "aclose", "acomplete", "preload", "redact"), "client"),
    **dict.fromkeys(("ModelConfig", "RetryPolicy"), "config"),
    **dict.fromkeys(("STANDARD_SIDES", "SideUsage", "UsageMeter"), "usage"),
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:  # a submodule (``from pytest_tau2.llm import client``): the import system loads it
        raise AttributeError(name)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "STANDARD_SIDES",
    "Completion",
    "ModelConfig",
    "RetryPolicy",
    "SideUsage",
    "ToolCallRequest",
    "UsageMeter",
    "aclose",
    "acomplete",
    "preload",
    "redact",
]
