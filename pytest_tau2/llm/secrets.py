"""Credentials never leave the process: masking for messages, metrics files and cassettes.

A credential is the string value of an argument whose name says so (``api_key``,
``azure_ad_token``, ``extra_headers["Authorization"]``, ...), the password of a URL with
credentials (``http://user:password@host``), an environment variable named ``*_API_KEY``,
``*_TOKEN`` or ``*_SECRET``, or a key-shaped string (``sk-...``, ``Bearer ...``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MASK", "is_secret_name", "mask_args", "redact", "secret_items"]

MASK = "***"

# Argument names whose string values are credentials (api_key, azure_ad_token,
# aws_secret_access_key, extra_headers["Authorization"], ...).
_SECRET_NAME = re.compile(r"key|token|secret|password|authorization|credential", re.IGNORECASE)
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
_MIN_ENV_SECRET_LEN = 8
# Explicit secrets shorter than this would mask ordinary words in messages.
_MIN_EXPLICIT_SECRET_LEN = 4
_SECRET_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}"),
)


def is_secret_name(name: str) -> bool:
    """Whether an argument of this name holds a credential (``api_key``, ``Authorization``, ...)."""
    return _SECRET_NAME.search(name) is not None


def secret_items(args: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """``(name, value)`` of every credential among model arguments, nested mappings included."""
    for name, value in args.items():
        if isinstance(value, Mapping):
            yield from secret_items(value)
        elif isinstance(value, str) and _SECRET_NAME.search(str(name)):
            yield name, value
        elif isinstance(value, str) and (password := _url_password(value)):
            yield name, password


def _url_password(value: str) -> str | None:
    """The password of a URL with credentials (``http://user:password@host``), else None."""
    if "://" not in value or "@" not in value:
        return None
    try:
        return urlsplit(value).password or None
    except ValueError:
        return None


def mask_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` with every credential replaced by ``***`` (a URL keeps all but its password)."""
    masked: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, Mapping):
            masked[name] = mask_args(value)
        elif isinstance(value, str) and _SECRET_NAME.search(str(name)):
            masked[name] = MASK
        elif isinstance(value, str) and (password := _url_password(value)):
            masked[name] = value.replace(f":{password}@", f":{MASK}@", 1)
        else:
            masked[name] = value
    return masked


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """Replace credentials in ``text`` with ``***``.

    Masks the given ``secrets`` (e.g. :meth:`ModelConfig.secrets`), the
    values of environment variables named ``*_API_KEY``, ``*_TOKEN`` or
    ``*_SECRET`` (at least 8 characters), and key-shaped strings such as
    ``sk-...`` and ``Bearer ...``.
    """
    candidates = {s for s in (secrets or ()) if len(s) >= _MIN_EXPLICIT_SECRET_LEN}
    candidates.update(_env_secrets())
    # Longest first, so a secret that contains another is masked whole.
    for secret in sorted(candidates, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(MASK, text)
    return text


def _env_secrets() -> set[str]:
    return {
        value
        for name, value in os.environ.items()
        if name.upper().endswith(_SECRET_ENV_SUFFIXES) and len(value) >= _MIN_ENV_SECRET_LEN
    }
