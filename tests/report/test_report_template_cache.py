"""report.html's template through jinja2's bytecode cache (report/html/render.py): compiled once,
loaded from the cache by later processes, and a cache that cannot be used only means compiling."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import Environment, PackageLoader

from pytest_tau2.report.html import render


def _page(cache: object) -> str:
    env = Environment(loader=PackageLoader("pytest_tau2.report.html", "templates"), bytecode_cache=cache)  # type: ignore[arg-type]
    env.filters.update(percent=str, count=str, seconds=str, usd=str, number=str, tojson_compact=str)
    return env.get_template("report.html.j2").filename or ""


def test_the_compiled_template_is_cached_and_loaded_back(tmp_path: Path) -> None:
    cache = render._QuietBytecodeCache(str(tmp_path))
    assert _page(cache).endswith("report.html.j2")
    written = list(tmp_path.iterdir())
    assert len(written) == 1 and written[0].stat().st_size > 1000  # the compiled code
    loaded = []
    original = cache.load_bytecode

    def watching(bucket: object) -> None:
        original(bucket)  # type: ignore[arg-type]
        loaded.append(getattr(bucket, "code", None) is not None)

    cache.load_bytecode = watching  # type: ignore[method-assign]
    _page(cache)
    assert loaded == [True]  # the second environment (another process's) did not compile


def test_an_unusable_cache_folder_only_means_compiling(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    assert _page(render._QuietBytecodeCache(str(not_a_folder))).endswith("report.html.j2")


def test_a_damaged_cache_entry_is_compiled_again(tmp_path: Path) -> None:
    cache = render._QuietBytecodeCache(str(tmp_path))
    _page(cache)
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(entry.read_bytes()[:40])  # cut short, as by a full disk
    assert _page(cache).endswith("report.html.j2")


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_NO_TEMPLATE_CACHE", "1")
    assert render._bytecode_cache() is None
    monkeypatch.delenv("TAU2_NO_TEMPLATE_CACHE")
    assert isinstance(render._bytecode_cache(), render._QuietBytecodeCache)
