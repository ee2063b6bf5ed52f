"""litellm's internals that the LLM client uses, in one place (read from litellm 1.60.0 and 1.110.2).

Everything else is litellm's public API (``acompletion``, ``completion_cost``, its exception
classes, ``provider_list``, ...). Four things are not; nothing else in the package touches them:

- its callback lists, two of them private (``_async_success_callback``,
  ``_async_failure_callback``): :data:`CALLBACK_LISTS`, read to tell whether anybody listens
  to litellm's calls (:func:`callbacks_registered`);
- a response's ``_hidden_params``, where litellm leaves the price it computed for the call
  (``response_cost``; :func:`hidden_params`);
- ``litellm._internal_context.internal_sub_call``, the context its own nested calls run in,
  which skips the per-call logging work (:func:`find_internal_sub_call`; since 1.83.9: on an
  older litellm every call takes the full logging path, as before);
- the frame of ``convert_to_model_response_object``
  (``litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response``) in an error's
  traceback, whose ``response_object`` local is the reply body litellm refused to convert
  (:func:`reply_not_converted`).

This module imports no litellm at import time (importing it costs seconds).
:func:`contract_problems` lists what an installed litellm lacks (tests/unit/test_compat_contract.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

TESTED = ("1.60.0", "1.110.2")
"""The litellm releases this module was read from and tested with (oldest, newest)."""
SUB_CALL_SINCE = (1, 83, 9)
"""The first litellm with ``_internal_context.internal_sub_call`` (found by bisecting the releases' wheels)."""

CALLBACK_LISTS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "_async_success_callback",
    "failure_callback",
    "_async_failure_callback",
    "service_callback",
)
"""litellm's lists of logging callbacks: a registered one means someone listens to litellm's calls."""

_CONVERTER = "convert_to_model_response_object"
_CONVERTER_MODULE = "litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response"
_BODY = "response_object"


def callbacks_registered(litellm: ModuleType) -> bool:
    """Whether a logging callback is registered with litellm (by a conftest, say)."""
    return any(getattr(litellm, name, None) for name in CALLBACK_LISTS)


def hidden_params(response: object) -> Mapping[str, object]:
    """A litellm response's ``_hidden_params`` (``response_cost`` among them); empty when it has none."""
    hidden = getattr(response, "_hidden_params", None)
    return hidden if isinstance(hidden, dict) else {}


def find_internal_sub_call() -> Callable[[], AbstractContextManager[object]] | None:
    """litellm's ``internal_sub_call`` context, or None on a litellm without it."""
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:  # an older or newer litellm: keep the full path
        return None
    return internal_sub_call


def reply_not_converted(exc: BaseException) -> dict[str, Any] | None:
    """The reply body (a dict with ``choices``) that litellm received but refused to convert, read
    from the ``convert_to_model_response_object`` frame in the traceback of ``exc`` or of an
    exception it was raised from; None for any other error or body."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_name == _CONVERTER:
                body = frame.f_locals.get(_BODY)
                if isinstance(body, dict) and isinstance(body.get("choices"), list):
                    return body
                return None
            tb = tb.tb_next
        current = current.__cause__ or current.__context__
    return None


def contract_problems() -> list[str]:
    """What the installed litellm lacks of the above, one line each naming it and the version."""
    import importlib
    import inspect
    from importlib.metadata import version

    import litellm
    from packaging.version import Version  # pytest's own dependency; only the contract check reads it

    installed = version("litellm")
    where = f"litellm {installed} (compat_litellm read {' and '.join(TESTED)})"
    problems = []
    for name in CALLBACK_LISTS:
        if not isinstance(getattr(litellm, name, None), list):
            problems.append(f"{where} lacks the callback list litellm.{name}")
    try:
        converter = getattr(importlib.import_module(_CONVERTER_MODULE), _CONVERTER)
    except (ImportError, AttributeError):
        problems.append(f"{where} lacks {_CONVERTER_MODULE}.{_CONVERTER}")
    else:
        if _BODY not in inspect.signature(converter).parameters:
            problems.append(f"{where}: {_CONVERTER} has no parameter {_BODY!r}")
    if not isinstance(getattr(litellm.ModelResponse(), "_hidden_params", None), dict):
        problems.append(f"{where}: a litellm.ModelResponse has no dict _hidden_params")
    if Version(installed).release >= SUB_CALL_SINCE and find_internal_sub_call() is None:
        problems.append(f"{where} lacks litellm._internal_context.internal_sub_call")
    return problems
