"""Text as the terminal (and pytest's reports) may show it: control characters escaped.

A model's reply can hold terminal control sequences (``ESC [2J`` clears the screen, ``ESC ]0;``
sets the window title, ``ESC [31m`` recolours what follows, a carriage return overwrites the
line) and bidirectional overrides that reorder what a reader sees. Quoted in a check message or
an error, they would act on the user's terminal instead of being read. Every such character is
shown as its Python escape (``\\x1b``, ``\\r``, ``\\u202e``); newlines and tabs stay. Result files
keep the exact text: only what pytest prints and reports goes through :func:`escape_controls`.
"""

from __future__ import annotations

import re

__all__ = ["escape_controls", "has_controls"]

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional formatting characters
# (embeddings, overrides, isolates, the implicit marks).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(found: re.Match[str]) -> str:
    char = found.group(0)
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a character :func:`escape_controls` would escape."""
    return _CONTROLS.search(text) is not None


def escape_controls(text: str) -> str:
    """``text`` with every control character (but newline and tab) written as its escape: ``\\x1b[2J``."""
    return _CONTROLS.sub(_escape, text) if _CONTROLS.search(text) else text
