"""Identifier lookup that tolerates how speech recognition spells ids.

A voice agent hears "hash W two six one..." or "noah brown six one eight one" and writes ids
with odd casing, spaces, hyphens, underscores or a missing ``#``. Lookups normalise both
sides before comparing; values written back to the DB always keep their stored form, so the
DB hash never depends on how the caller spelled an id.

What is *not* forgiven: different characters (``#W2611340`` never finds ``#W2611341``), and
zip codes, which compare exactly (upstream does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

_ID_NOISE = re.compile(r"[\s\-_#.]+")
_EMAIL_NOISE = re.compile(r"\s+")

V = TypeVar("V")


def id_key(value: str) -> str:
    """Normalised form of an order/user/item/product/reservation id or flight number."""
    return _ID_NOISE.sub("", value).casefold()


def email_key(value: str) -> str:
    """Normalised form of an email address: case and whitespace ignored, punctuation kept."""
    return _EMAIL_NOISE.sub("", value).casefold()


def find_key(mapping: Mapping[str, object], wanted: str) -> str | None:
    """The stored key of ``mapping`` that ``wanted`` names, exact match first."""
    if wanted in mapping:
        return wanted
    target = id_key(wanted)
    if not target:
        return None
    for key in mapping:
        if id_key(key) == target:
            return key
    return None


def lookup(mapping: Mapping[str, V], wanted: str) -> V | None:
    """The value stored under the key ``wanted`` names, or None."""
    key = find_key(mapping, wanted)
    return None if key is None else mapping[key]


def same_id(a: str, b: str) -> bool:
    """True when two spellings name the same id."""
    return a == b or id_key(a) == id_key(b)


def match_ids(wanted: Iterable[str], stored: Iterable[str]) -> list[str]:
    """Map each wanted id to its stored spelling (unmatched ones are kept as given)."""
    stored_list = list(stored)
    out = []
    for w in wanted:
        hit = next((s for s in stored_list if same_id(w, s)), None)
        out.append(hit if hit is not None else w)
    return out
