"""``pytest-tau2 list``: the scenarios a ``pytest`` run in a project would collect, by domain.

The list comes from pytest's own collection (``pytest --collect-only`` in a child process,
with this module loaded as a plugin that writes what it collected), so it sees exactly what
``pytest`` started in that folder sees: the rootdir and its ini file, the root
``conftest.py`` that imports the project's scenarios (this repository's imports
``scenarios``), ``tau2_*`` ini settings such as ``tau2_telecom_tasks``, and any pytest options
given after the command's own (``-k``, ``-m``, ``--tau2-telecom-tasks=full``). Collection
reads the registry and, for the tau2 ports, the task lists; it parses no database, seeds
nothing and calls no model. This module imports pytest only for type checking: the child
process is the pytest adapter.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

UNAVAILABLE = "__unavailable"
SPLIT_MARKERS = {"tau2_split_train": "train", "tau2_split_test": "test"}
NO_TESTS_COLLECTED = 5
"""pytest's exit code when nothing was collected."""
OUTPUT_TAIL = 40
"""Lines of pytest's output shown when collection fails."""
NOT_SHOWN = frozenset({"tau2", "parametrize", "skipif"})  # skipif: test_scenario under -p no:tau2 (item.py)
"""Markers every scenario has (or pytest's own): not worth a column."""


@dataclass
class Domain:
    """One domain's collected scenarios (name -> marker names), or why it is unavailable."""

    name: str
    scenarios: dict[str, list[str]] = field(default_factory=dict)
    unavailable: str | None = None

    def split_counts(self) -> dict[str, int]:
        counts = {label: 0 for label in SPLIT_MARKERS.values()}
        for markers in self.scenarios.values():
            for marker in markers:
                if marker in SPLIT_MARKERS:
                    counts[SPLIT_MARKERS[marker]] += 1
        return {label: n for label, n in counts.items() if n}


@dataclass
class Listing:
    rootdir: Path
    domains: dict[str, Domain]


class ListingError(Exception):
    """pytest could not collect (usage error, collection error, nothing collected); carries its output."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# ---- the collecting side: a pytest plugin module (``-p pytest_tau2.plugin.listing``) -------------------------

OUTPUT_ENV = "PYTEST_TAU2_LIST_OUTPUT"
"""Where the collecting process writes what it found (JSON); the plugin does nothing without it."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """Write the collected scenario items, their markers and the unavailable domains' errors."""
    output = os.environ.get(OUTPUT_ENV)
    if not output:
        return
    from pytest_tau2.plugin.keys import PARAM
    from pytest_tau2.plugin.run_state import RUN_KEY

    items = []
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and PARAM in callspec.params:
            markers = sorted({m.name for m in item.iter_markers()} - NOT_SHOWN)
            items.append([str(callspec.params[PARAM]), markers])
    run = session.config.stash.get(RUN_KEY, None)
    errors = run.catalog.errors if run is not None and run.configured else {}
    unavailable = {name: f"{type(exc).__name__}: {exc}" for name, exc in errors.items()}
    found = {"rootdir": str(session.config.rootpath), "items": items, "unavailable": unavailable}
    Path(output).write_text(json.dumps(found), "utf-8")


# ---- the listing side ------------------------------------------------------------------------------------


@dataclass
class _Collected:
    code: int
    output: str
    rootdir: Path | None = None
    items: list[tuple[str, list[str]]] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)


def collect(folder: Path, pytest_args: Sequence[str] = ()) -> Listing:
    """Collect as ``cd folder && pytest --collect-only [pytest_args]`` would (in a child process)."""
    found = _collect_in(folder, pytest_args)
    if not found.items and found.rootdir is not None and found.rootdir != folder.resolve():
        # Started in a subfolder of a project: pytest would collect only that subfolder (testpaths
        # apply at the rootdir), but a listing is about the project. Collect from its rootdir.
        folder = found.rootdir
        found = _collect_in(folder, pytest_args)
    if found.code == NO_TESTS_COLLECTED or (found.code == 0 and not found.items):
        raise ListingError(
            f"no scenario collected in {found.rootdir or folder} (is there a test module with "
            "'from pytest_tau2 import test_scenario', and a conftest.py that imports your scenarios?)",
            1,
        )
    if found.code != 0:
        lines = found.output.rstrip().splitlines()
        shown = "\n".join(lines[-OUTPUT_TAIL:])
        more = f"(the last {OUTPUT_TAIL} lines; pytest --collect-only shows all)\n" if len(lines) > OUTPUT_TAIL else ""
        raise ListingError(f"pytest could not collect in {folder} (exit code {found.code}):\n{more}{shown}", 2)
    domains: dict[str, Domain] = {}
    for name, markers in found.items:
        domain = domains.setdefault(name.split("__", 1)[0], Domain(name.split("__", 1)[0]))
        if name.endswith(UNAVAILABLE):
            domain.unavailable = found.unavailable.get(name, "unavailable (run its item to see why)")
        else:
            domain.scenarios[name] = markers
    return Listing(found.rootdir or folder, dict(sorted(domains.items())))


def _collect_in(folder: Path, pytest_args: Sequence[str]) -> _Collected:
    # A child process: collection imports the project's conftest and scenario modules, which must
    # not leak into this one (or into the next collection, from the rootdir).
    with tempfile.TemporaryDirectory(prefix="tau2-list-") as scratch:
        output = Path(scratch) / "collected.json"
        command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", __name__]
        done = subprocess.run(
            [*command, *pytest_args],
            cwd=folder,
            env={**os.environ, OUTPUT_ENV: str(output)},
            capture_output=True,
            text=True,
            check=False,
        )
        if not output.exists():
            return _Collected(done.returncode, done.stdout + done.stderr)
        data = json.loads(output.read_text("utf-8"))
    items = [(str(name), list(markers)) for name, markers in data["items"]]
    return _Collected(done.returncode, done.stdout + done.stderr, Path(data["rootdir"]), items, data["unavailable"])


def select_domains(listing: Listing, wanted: Sequence[str]) -> list[Domain]:
    """The domains named in ``wanted`` (all when empty); an unknown name is an error with suggestions."""
    if not wanted:
        return list(listing.domains.values())
    unknown = [w for w in wanted if w not in listing.domains]
    if unknown:
        known = list(listing.domains)
        hints = [f"{w!r}" + _did_you_mean(difflib.get_close_matches(w, known, n=3)) for w in unknown]
        raise ListingError(f"no domain {', '.join(hints)}; collected domains: {', '.join(known)}", 2)
    return [listing.domains[w] for w in wanted]


def _did_you_mean(names: Sequence[str]) -> str:
    return f" (did you mean {', '.join(names)}?)" if names else ""


def render(listing: Listing, domains: Sequence[Domain]) -> str:
    total = sum(len(d.scenarios) for d in domains)
    lines = [f"rootdir: {listing.rootdir}", f"{_count(total, 'scenario')} in {_count(len(domains), 'domain')}", ""]
    for domain in domains:
        lines.append(_heading(domain))
        if domain.unavailable is not None:
            lines.extend(f"    {line}" for line in domain.unavailable.splitlines())
        width = min(max((len(n) for n in domain.scenarios), default=0), 40)
        for name, markers in sorted(domain.scenarios.items(), key=lambda kv: _natural(kv[0])):
            lines.append(f"  {name:<{width}}  {' '.join(markers)}".rstrip())
        lines.append("")
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _natural(name: str) -> list[tuple[int, int | str]]:
    """Sort key putting tau2_retail__2 before tau2_retail__10."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part]


def _heading(domain: Domain) -> str:
    count = len(domain.scenarios)
    if domain.unavailable is not None and not count:
        return f"{domain.name}: unavailable"
    text = f"{domain.name}: {_count(count, 'scenario')}"
    splits = domain.split_counts()
    if splits:
        text += " (" + ", ".join(f"{n} {label}" for label, n in splits.items()) + ")"
    return text


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="List the scenarios that pytest collects in a project, under domain headings, with "
        "their markers (tau2_split_train / tau2_split_test: upstream's splits). Other arguments are "
        "passed to pytest, e.g. -m tau2_split_test or --tau2-telecom-tasks=full.",
    )
    parser.add_argument(
        "--domain",
        action="append",
        default=[],
        metavar="D",
        help="only this domain (repeatable, or comma-separated)",
    )
    parser.add_argument(
        "--rootdir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the project folder, where you would start pytest (default: the current folder)",
    )
    return parser


def main(argv: Sequence[str], prog: str = "pytest-tau2 list") -> int:
    parser = build_parser(prog)
    args, pytest_args = parser.parse_known_args(argv)
    folder = args.rootdir or Path.cwd()
    if not folder.is_dir():
        parser.error(f"--rootdir {folder} is not a folder")
    wanted = [d.strip() for value in args.domain for d in value.split(",") if d.strip()]
    try:
        listing = collect(folder, pytest_args)
        print(render(listing, select_domains(listing, wanted)))
    except ListingError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `pytest-tau2 list | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
