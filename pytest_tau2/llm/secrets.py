"""Credentials never leave the process: masking for messages, metrics files and cassettes.

A credential is the string value of an argument whose name says so (``api_key``,
``azure_ad_token``, ``extra_headers["Authorization"]``, ...), the password of a URL with
credentials (``http://user:password@host``), the value of a provider-key environment variable
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ...), the value of a
credential-named query parameter of a URL (``ws://host/agent?token=...``,
``https://host/v1?api-key=...``), or a key-shaped token (``sk-...``, ``Bearer ...``, ``AIza...``).

A value that cannot be a credential is never searched for: the dummy keys local servers are
given (``"api_key": "none"``, ``EMPTY``, ``x``, ``sk-no-key``), anything shorter than 8
characters, and words without a digit shorter than 20 characters. Masking such a value would
rewrite every "none" of every transcript (:func:`could_be_secret`).

Masking works on whole tokens: a secret or a key shape is replaced only where it is not part of
a longer run of letters and digits, so ordinary text ("risk-assessment-meeting") is never
touched (docs/faults.md, "Secrets").
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

__all__ = [
    "MASK",
    "SecretDict",
    "could_be_secret",
    "is_secret_name",
    "mask_args",
    "mask_json_text",
    "mask_url",
    "redact",
    "redact_data",
    "redactor",
    "secret_items",
    "secrets_in_json",
]

MASK = "***"

# Argument names whose string values are credentials (api_key, azure_ad_token,
# aws_secret_access_key, extra_headers["Authorization"], ...).
_SECRET_NAME = re.compile(r"key|token|secret|password|authorization|credential", re.IGNORECASE)
# Environment variables that hold provider credentials: OPENAI_API_KEY, ANTHROPIC_API_KEY,
# GEMINI_API_KEY, AZURE_API_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY, AZURE_AD_TOKEN, ...
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_API_TOKEN", "_TOKEN", "_SECRET", "_SECRET_KEY", "_SECRET_ACCESS_KEY")
# An environment value is masked only when it looks like a key (long, letters and digits, no
# spaces): a variable such as FEATURE_TOKEN=disabled must not mask the word "disabled".
_MIN_ENV_SECRET_LEN = 12
# Explicit secrets shorter than this would mask ordinary words and numbers in messages; no
# provider issues keys this short.
_MIN_EXPLICIT_SECRET_LEN = 8
# A value without a digit is a word ("placeholder", "notneeded") unless it is at least this long.
_MIN_WORDLIKE_SECRET_LEN = 20
# The dummy keys that local OpenAI-compatible servers (vLLM, Ollama, llama.cpp, LM Studio) are
# documented with, compared without case: they are placeholders, not credentials.
DUMMY_KEYS = frozenset(
    {
        "none", "null", "nil", "empty", "x", "xx", "xxx", "dummy", "fake", "test", "unused", "placeholder",
        "na", "n/a", "no-key", "nokey", "no_key", "not-needed", "notneeded", "not-required", "key", "apikey",
        "api-key", "api_key", "token", "secret", "password", "changeme", "anything", "local", "ollama", "vllm",
        "lm-studio", "lmstudio", "llama.cpp", "sk-no-key", "sk-no-key-required", "sk-none", "sk-dummy", "sk-fake",
        "sk-test", "sk-local", "sk-xxx", "sk-1234", "sk-12345", "sk-123456", "sk-xxxxxxxx", "sk-placeholder",
    }
)  # fmt: skip
# A token boundary: no letter or digit (nor the key alphabet's '_' and '-') right before or after.
_KEY_CHARS = r"A-Za-z0-9_\-"
_BEFORE = rf"(?<![{_KEY_CHARS}])"
_AFTER = rf"(?![{_KEY_CHARS}])"
# Provider-key shapes, each a whole token holding at least one digit (a generated key always
# does; an ordinary hyphenated word such as "sk-assessment-meeting" does not).
_SECRET_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str], str], ...] = (
    # (literal prefixes, pattern, replacement). A pattern runs only on text holding one of its
    # prefixes: most text holds none, and a scan costs ~8 ms per 200 KB (measured on retail's
    # tasks.json), a substring test a few microseconds.
    (("sk-",), re.compile(rf"{_BEFORE}sk-(?=[{_KEY_CHARS}]*\d)[{_KEY_CHARS}]{{8,}}{_AFTER}"), MASK),  # OpenAI, ...
    (
        ("gsk", "xai", "pplx"),  # Groq, xAI, Perplexity
        re.compile(rf"{_BEFORE}(?:gsk|xai|pplx)[_-](?=[{_KEY_CHARS}]*\d)[{_KEY_CHARS}]{{16,}}{_AFTER}"),
        MASK,
    ),
    (("AIza",), re.compile(rf"{_BEFORE}AIza[{_KEY_CHARS}]{{30,}}{_AFTER}"), MASK),  # Google
    (
        ("hf_", "ghp_", "gho_", "ghs_", "github_pat_"),  # Hugging Face, GitHub
        re.compile(rf"{_BEFORE}(?:hf|ghp|gho|ghs|github_pat)_(?=[{_KEY_CHARS}]*\d)[{_KEY_CHARS}]{{16,}}{_AFTER}"),
        MASK,
    ),
    (("AKIA", "ASIA"), re.compile(rf"{_BEFORE}(?:AKIA|ASIA)[0-9A-Z]{{16}}{_AFTER}"), MASK),  # AWS access key id
    (("Bearer ",), re.compile(r"\bBearer [A-Za-z0-9._~+/=-]{8,}"), f"Bearer {MASK}"),
)
# ``scheme://user:password@host``: the password part (up to the '@' that ends the userinfo).
_URL_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'\"]*:)(?P<password>[^\s/@'\"]+)(?=@)")
# Query parameter names whose values are credentials (``token``, ``key``, ``api-key``, ``sig``,
# ``X-Amz-Signature``, ``access_token``, ``password``, ``secret``, ``auth``, ``jwt``, ``session``...).
_SECRET_PARAM_WORDS = r"(?:key|token|secret|passw|pwd|sig|auth|credential|jwt|session)"
_PARAM_NAME_CHAR = r"[^=&;#?\s'\"<>/]"
# One credential ``name=value`` of a query string (or of a fragment holding parameters, as
# OAuth's ``#access_token=``), in a URL or in a bare path a server echoes back
# (``no route for POST /v1/?api-key=...``): the value up to the next separator.
_QUERY_SECRET = re.compile(
    rf"(?P<head>[?&;#]{_PARAM_NAME_CHAR}*{_SECRET_PARAM_WORDS}{_PARAM_NAME_CHAR}*=)(?P<value>[^&;#\s'\"<>]+)",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """Whether an argument of this name holds a credential (``api_key``, ``Authorization``, ...)."""
    return _SECRET_NAME.search(name) is not None


def could_be_secret(value: str) -> bool:
    """Whether ``value`` may be a real credential, worth masking wherever it shows up.

    Not: a dummy key (``none``, ``EMPTY``, ``x``, ``sk-no-key``, :data:`DUMMY_KEYS`), anything
    shorter than 8 characters, nor a value without a digit shorter than 20 characters (a word
    such as ``placeholder``). Provider keys are longer and hold digits; masking a placeholder
    would rewrite that word in every transcript and cassette, and a cassette recorded so would
    replay under no other key.
    """
    value = value.strip()
    if len(value) < _MIN_EXPLICIT_SECRET_LEN or value.lower() in DUMMY_KEYS:
        return False
    if len(set(value.lower())) <= 1:  # "xxxxxxxx", "00000000"
        return False
    return any(c.isdigit() for c in value) or len(value) >= _MIN_WORDLIKE_SECRET_LEN


def secret_items(args: Mapping[str, object]) -> Iterable[tuple[str, str]]:
    """``(name, value)`` of every credential among model arguments, nested mappings included
    (URL passwords and credential query values too)."""
    for name, value in args.items():
        if isinstance(value, Mapping):
            yield from secret_items(value)
        elif isinstance(value, str) and _SECRET_NAME.search(str(name)):
            yield name, value
        elif isinstance(value, str) and "://" in value:
            if password := _url_password(value):
                yield name, password
            for param in _query_secrets(value):
                yield name, param


def _query_secrets(url: str) -> list[str]:
    """The values of the credential-named query parameters of ``url``."""
    return [m.group("value") for m in _QUERY_SECRET.finditer(url)] if "=" in url else []


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
        elif isinstance(value, str) and "://" in value:
            masked[name] = mask_url(value)
        else:
            masked[name] = value
    return masked


def mask_url(url: str) -> str:
    """``url`` (or a text holding URLs) with its credentials masked: the password of the userinfo
    (``ws://bob:***@host:8765``) and the values of credential-named query parameters
    (``ws://host/agent?token=***&lang=en``, ``https://host/v1?api-key=***``)."""
    masked = _URL_USERINFO.sub(lambda m: m.group("head") + MASK, url) if "://" in url else url
    if "=" in masked:
        masked = _QUERY_SECRET.sub(lambda m: m.group("head") + MASK, masked)
    return masked


# ``"<credential-named key>": "<value>"`` inside JSON text, parseable or not.
_JSON_SECRET_VALUE = re.compile(
    r'(?P<head>"[^"\\]*(?:key|token|secret|password|authorization|credential)[^"\\]*"\s*:\s*")'
    r'(?P<value>(?:[^"\\]|\\.)*)(?=")',
    re.IGNORECASE,
)


def mask_json_text(text: str) -> str:
    """Option text such as ``--tau2-agent-args`` with its credentials masked, even when it is not valid JSON.

    Masks the string value of every credential-named key, URL passwords, and key-shaped tokens:
    what a usage error may echo back.
    """
    masked = _JSON_SECRET_VALUE.sub(lambda m: m.group("head") + MASK, text)
    return redact(masked)


def secrets_in_json(text: str | None) -> list[str]:
    """The credentials in a JSON-object option text (``[]`` when it is absent or not an object)."""
    if not text:
        return []
    try:
        parsed = json.loads(text)
    except ValueError:
        return [m.group("value") for m in _JSON_SECRET_VALUE.finditer(text) if m.group("value")]
    return [value for _, value in secret_items(parsed)] if isinstance(parsed, dict) else []


class SecretDict(dict[str, Any]):
    """A dict whose ``repr`` masks credentials (what ``pytest -l`` prints for a local variable)."""

    def __repr__(self) -> str:
        return repr(mask_args(self))


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """Replace credentials in ``text`` with ``***``, whole tokens only.

    Masks the given ``secrets`` (e.g. :meth:`ModelConfig.secrets`; only those that
    :func:`could_be_secret`, never a dummy key such as ``none``), the values of provider-key
    environment variables (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ... that look like keys),
    passwords and credential query values in URLs (``ws://user:***@host/?token=***``), and
    key-shaped tokens (``sk-...``, ``Bearer ...``). A secret or shape is replaced only where it is
    not part of a longer word: "risk-assessment-meeting" stays as it is.
    """
    return _redact(text, _candidates(secrets))


def redactor(secrets: Iterable[str] | None = None) -> Callable[[str], str]:
    """:func:`redact` with ``secrets`` and the environment's keys looked up once, for many texts."""
    candidates = _candidates(secrets)
    return lambda text: _redact(text, candidates)


def _candidates(secrets: Iterable[str] | None) -> frozenset[str]:
    """The given secrets that could be credentials, plus the key-like values of the environment."""
    return frozenset({s for s in (secrets or ()) if could_be_secret(s)} | _env_secrets())


def _redact(text: str, candidates: frozenset[str]) -> str:
    present = frozenset(s for s in candidates if s in text)
    if present:
        text = _secrets_pattern(present).sub(MASK, text)
    if "://" in text or "=" in text:
        text = mask_url(text)
    for prefixes, pattern, replacement in _SECRET_PATTERNS:
        if any(prefix in text for prefix in prefixes):
            text = pattern.sub(replacement, text)
    return text


def redact_data(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """``value`` with :func:`redact` applied to every string in it, structure and numbers kept.

    A scenario's transcript holds thousands of strings and almost never a credential, so the
    JSON text of the whole value is searched once first; only when a secret, a URL with a password or a key
    prefix shows up anywhere is each string redacted (returned as is otherwise, not copied).
    """
    candidates = _candidates(secrets)
    # JSON escapes quotes, backslashes and control characters: such a secret could hide there.
    plain = not any(any(c in secret for c in '"\\') or not secret.isprintable() for secret in candidates)
    if plain:
        text = _searchable(value)
        if text is not None and not _may_need_redaction(text, candidates):
            return value
    return _walk(value, candidates)


def _searchable(value: Any) -> str | None:
    """The JSON text of ``value`` to search, or None: orjson (compact; ~6x the stdlib encoder on a
    transcript), the stdlib for what orjson refuses (an integer beyond 64 bits, a lone surrogate).
    A match in the compact form that the spaced one would not have is possible only across two
    values (``","`` has no space), and only sends the value through the per-string walk."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except (TypeError, ValueError):
        pass
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return None


def _may_need_redaction(text: str, candidates: Iterable[str]) -> bool:
    if any(secret in text for secret in candidates):
        return True
    if "://" in text and _URL_USERINFO.search(text):  # a plain api_base URL has nothing to mask
        return True
    if "=" in text and _QUERY_SECRET.search(text):
        return True
    return any(prefix in text for prefixes, _, _ in _SECRET_PATTERNS for prefix in prefixes)


def _walk(value: object, candidates: frozenset[str]) -> object:
    if isinstance(value, str):
        return _redact(value, candidates)
    if isinstance(value, dict):
        return {key: _walk(item, candidates) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, candidates) for item in value]
    return value


@functools.lru_cache(maxsize=64)
def _secrets_pattern(secrets: frozenset[str]) -> re.Pattern[str]:
    """One alternation of every secret, longest first, each bounded where its edge is a letter or digit."""
    parts = []
    for secret in sorted(secrets, key=lambda s: (-len(s), s)):
        before = r"(?<![A-Za-z0-9])" if secret[0].isalnum() else ""
        after = r"(?![A-Za-z0-9])" if secret[-1].isalnum() else ""
        parts.append(before + re.escape(secret) + after)
    return re.compile("|".join(parts))


def _env_secrets() -> set[str]:
    # Names first, then get(): redaction runs on the --tau2-concurrency loop thread while pytest's
    # thread sets and deletes PYTEST_CURRENT_TEST, and os.environ.items() then raises KeyError.
    names = [name for name in list(os.environ) if name.upper().endswith(_SECRET_ENV_SUFFIXES)]
    values = (os.environ.get(name) for name in names)
    return {value for value in values if value is not None and _looks_like_key(value)}


def _looks_like_key(value: str) -> bool:
    """Long, one word, letters and digits: a credential, not a setting such as ``disabled`` or ``1``."""
    return (
        len(value) >= _MIN_ENV_SECRET_LEN
        and not any(c.isspace() for c in value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )
