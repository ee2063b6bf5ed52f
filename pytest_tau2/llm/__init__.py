"""LLM access for pytest-tau2: the only package that talks to litellm.

Importing this package does not import litellm; that happens on the first call
to :func:`acomplete`.
"""

from __future__ import annotations

from pytest_tau2.llm.client import Completion, ToolCallRequest, aclose, acomplete, preload, redact
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.usage import STANDARD_SIDES, SideUsage, UsageMeter

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
