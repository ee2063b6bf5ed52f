"""Reading data files so that a broken one is a :class:`~pytest_tau2.errors.DataError` naming the file and line.

A JSON or TOML file that does not parse would otherwise surface as a bare ``JSONDecodeError``
in every scenario that reads it, with no path. :func:`read_json` and :func:`read_toml` parse;
:func:`not_parseable` turns a decoder's exception into the error; :func:`check_syntax` lets
:func:`~pytest_tau2.data.resolve.verify` refuse a changed, unparseable file of an unpinned data
set once, at collection, instead of once per scenario.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import orjson

from pytest_tau2.environment.jsontypes import JSONValue
from pytest_tau2.errors import DataError

__all__ = ["PARSE_ERRORS", "check_syntax", "load_json_file", "not_parseable", "parsed", "read_json", "read_toml"]

PARSE_ERRORS: tuple[type[Exception], ...] = (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError)
"""What a decoder raises for a file that is not valid JSON / TOML / UTF-8."""

_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")
T = TypeVar("T")


def not_parseable(path: Path, exc: Exception, hint: str = "") -> DataError:
    """The DataError for ``path`` that ``exc`` (one of :data:`PARSE_ERRORS`) failed to parse."""
    if isinstance(exc, json.JSONDecodeError):
        where, what = f"{path}:{exc.lineno}:{exc.colno}", f"not valid JSON: {exc.msg}"
    elif isinstance(exc, tomllib.TOMLDecodeError):
        found = _TOML_POSITION.search(str(exc))
        where = f"{path}:{found.group(1)}:{found.group(2)}" if found else str(path)
        what = f"not valid TOML: {_TOML_POSITION.sub('', str(exc)).strip()}"
    elif isinstance(exc, UnicodeDecodeError):
        where, what = f"{path} (byte {exc.start})", f"not UTF-8 text: {exc.reason}"
    else:
        where, what = str(path), f"cannot be read: {type(exc).__name__}: {exc}"
    return DataError(f"{where}: {what}" + (f"; {hint}" if hint else ""))


def parsed(path: Path, read: Callable[[Path], T], hint: str = "") -> T:
    """``read(path)``, with a parse failure raised as a DataError naming the file and line."""
    try:
        return read(path)
    except PARSE_ERRORS as exc:
        raise not_parseable(path, exc, hint) from None


def load_json_file(path: str | Path) -> JSONValue:
    """The JSON file's value, parsed by orjson (retail's 2.8 MB DB: ~10 ms against the json module's
    ~14; airline's 7 MB: ~37 against ~60). What orjson refuses (a number beyond 64 bits, ``NaN``,
    a lone surrogate escape, a BOM, a syntax error) is parsed by the json module as UTF-8 text, so
    the value and the error are what ``json.load`` gives for the file."""
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        value: JSONValue = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = json.loads(raw.decode("utf-8"))
    return value


def _load_toml(path: Path) -> dict[str, object]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def read_json(path: Path) -> JSONValue:
    """The parsed JSON file; a DataError naming ``path:line:column`` when it does not parse."""
    return parsed(path, load_json_file)


def read_toml(path: Path) -> dict[str, object]:
    """The parsed TOML file; a DataError naming ``path:line:column`` when it does not parse."""
    return parsed(path, _load_toml)


def check_syntax(path: Path, hint: str = "") -> None:
    """Raise a DataError when a ``.json`` or ``.toml`` file does not parse (other files pass)."""
    if path.suffix == ".json":
        parsed(path, load_json_file, hint)
    elif path.suffix == ".toml":
        parsed(path, _load_toml, hint)
