"""``pytest-tau2 merge DIR... --into DIR``: one results folder from the folders of a sharded run.

Each shard of a CI matrix (``--tau2-shard I/N``) writes its own results folder. The merge reads
them, refuses what would make the combined result a lie, and writes a folder that looks like
the one an unsharded run writes: every scenario folder, all_metrics.json, all_summary.txt,
run.json, report.html and, when every shard left one, junit.xml.

It refuses, naming the folders and what differs:

- folders whose run.json fingerprints differ (agent, user, judge, model arguments, limits,
  verdict options, the data pin): their verdicts are not of one run. The agent and user are
  compared as the results name them (a conftest's Python agent: ``python:<module>.<class>@<version>``);
  a folder without results did not learn its agent, so only its other settings are compared.
  The model servers' addresses (run.json's ``endpoints``) may differ: each shard may have its
  own server; the merge warns and records every address;
- scenarios whose recorded tau2 data differs (commit, pinned or not) between folders;
- a scenario (or trial) present in two folders;
- an incomplete set of shards: run.json says ``I/N``; each of 1..N must be there exactly once
  (unsharded folders may be merged with each other, never with shards);
- a folder whose run has not finished (it holds the run's lock, or scenario folders without
  all_metrics.json);
- a folder whose files disagree with each other: a scenario's metrics.json and its entry in
  all_metrics.json (verdict, stop reason, any signal, a gating sub-result, the error), or its
  junit.xml test case (missing, extra, or with other properties). Each file is written from the
  same record, so a difference means a file was edited or lost.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_tau2 import __version__
from pytest_tau2.errors import Tau2Error
from pytest_tau2.report import files
from pytest_tau2.report.junit_merge import JUnitMergeError, merge_junit
from pytest_tau2.report.junit_shape import suite_properties
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import LOCK_FILE, PARTICIPANT_KEYS, RUN_FILE, ErrorEntry, RunInfo, RunMetrics
from pytest_tau2.report.views import VIEWS, RunFiles, write_views
from pytest_tau2.settings.shards import Shard, parse_shard

JUNIT_NAME = "junit.xml"
"""Where a shard's JUnit file is looked for (``--junitxml=<results dir>/junit.xml``), and the merged one's name."""


class MergeError(Tau2Error):
    """The folders cannot be merged into one result (the message names them and why)."""


@dataclass
class ShardFolder:
    path: Path
    fingerprint: dict[str, Any]
    shard: Shard | None
    started: str | None
    endpoints: dict[str, Any] | None = None
    metrics: list[ScenarioRecord] = field(default_factory=list)
    errors: list[ErrorEntry] = field(default_factory=list)
    other: dict[str, Any] = field(default_factory=dict)
    """Keys of all_metrics.json besides scenarios and errors_without_result."""
    note: str | None = None
    """The first line of the shard's summary when its run was interrupted."""

    def folders(self) -> list[str]:
        """Result folder names of every entry (``name`` or ``name-t<k>``), then the errored items."""
        return [m.folder for m in self.metrics] + [e.scenario for e in self.errors]

    @property
    def label(self) -> str:
        return f"{self.path} (shard {self.shard})" if self.shard else str(self.path)


def read_folder(path: Path) -> ShardFolder:
    """One results folder as the merge needs it; a MergeError naming the folder when it is not usable."""
    if not path.is_dir():
        raise MergeError(f"{path}: not a folder")
    if (path / LOCK_FILE).exists():
        raise MergeError(f"{path}: holds {LOCK_FILE}, so its run is still going or was killed; merge finished runs")
    try:
        run = RunInfo.model_validate(files.loads((path / RUN_FILE).read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):  # pydantic's ValidationError is a ValueError
        raise MergeError(f"{path}: no readable {RUN_FILE} (not a pytest-tau2 results folder)") from None
    try:
        shard = parse_shard(run.shard) if run.shard else None
    except ValueError as exc:
        raise MergeError(f"{path}/{RUN_FILE}: shard {exc}") from None
    folder = ShardFolder(path, run.fingerprint, shard, run.started, run.endpoints)
    all_metrics = path / "all_metrics.json"
    if not all_metrics.exists():
        ran = sorted(child.name for child in path.iterdir() if (child / "metrics.json").is_file())
        if ran:
            raise MergeError(
                f"{path}: no all_metrics.json next to results of {', '.join(ran[:5])}: its run did not end"
            )
        return folder  # a shard that selected no scenario
    try:
        data = RunMetrics.read(files.loads(all_metrics.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):  # pydantic's ValidationError is a ValueError
        raise MergeError(f"{all_metrics}: not readable as pytest-tau2's all_metrics.json") from None
    folder.metrics, folder.errors, folder.other = data.scenarios, data.errors_without_result, data.other
    summary = path / "all_summary.txt"
    first = summary.read_text("utf-8").split("\n", 1)[0] if summary.exists() else ""
    folder.note = first if first.startswith("Interrupted") else None
    for name in folder.folders()[: len(folder.metrics)]:
        if not (path / name / "metrics.json").is_file():
            raise MergeError(f"{path}: all_metrics.json lists {name} but {path / name / 'metrics.json'} is missing")
    return folder


def check(folders: Sequence[ShardFolder]) -> None:
    """Raise a MergeError naming every reason these folders are not one run's shards."""
    problems: list[str] = []
    seen: dict[Path, Path] = {}
    for f in folders:
        real = f.path.resolve()
        if real in seen:
            problems.append(f"{f.path} is given twice")
        seen[real] = f.path
    first = next((f for f in folders if f.metrics), folders[0])
    for f in folders:
        if f is first:
            continue
        skip = set() if f.metrics and first.metrics else set(PARTICIPANT_KEYS)  # a folder with no result
        keys = sorted((set(first.fingerprint) | set(f.fingerprint)) - skip)
        changed = [
            f"{k}: {first.fingerprint.get(k)!r} in {first.path}, {f.fingerprint.get(k)!r} in {f.path}"
            for k in keys
            if first.fingerprint.get(k) != f.fingerprint.get(k)
        ]
        if changed:
            problems.append("different settings or data pin (run.json fingerprint): " + "; ".join(changed))
    problems += _data_pins(folders)
    problems += _overlaps(folders)
    problems += _shard_set(folders)
    if problems:
        raise MergeError("cannot merge: " + "\n  ".join(["", *problems]).lstrip("\n "))


def _data_pins(folders: Sequence[ShardFolder]) -> list[str]:
    """Scenarios of one domain must have read the same tau2 data (commit, pinned) in every folder."""
    by_domain: dict[str, dict[str, list[str]]] = {}
    for f in folders:
        for m in f.metrics:
            pin = m.data_pin
            if pin is not None:
                key = json.dumps({"commit": pin.commit, "pinned": pin.pinned}, sort_keys=True)
                places = by_domain.setdefault(m.domain, {}).setdefault(key, [])
                if str(f.path) not in places:
                    places.append(str(f.path))
    return [
        f"domain {domain} read different tau2 data: " + "; ".join(f"{pin} in {', '.join(p)}" for pin, p in pins.items())
        for domain, pins in sorted(by_domain.items())
        if len(pins) > 1
    ]


def _overlaps(folders: Sequence[ShardFolder]) -> list[str]:
    owners: dict[str, list[str]] = {}
    for f in folders:
        for name in f.folders():
            owners.setdefault(name, []).append(str(f.path))
    twice = {name: where for name, where in sorted(owners.items()) if len(where) > 1}
    return [f"{name} is in more than one folder: {', '.join(where)}" for name, where in twice.items()]


def _shard_set(folders: Sequence[ShardFolder]) -> list[str]:
    sharded = [f for f in folders if f.shard is not None]
    if not sharded:
        return []
    problems: list[str] = []
    plain = [str(f.path) for f in folders if f.shard is None]
    if plain:
        problems.append(f"not from a sharded run (no --tau2-shard in run.json): {', '.join(plain)}")
    counts = sorted({f.shard.count for f in sharded if f.shard is not None})
    if len(counts) > 1:
        parts = ", ".join(f"{f.path} is {f.shard}" for f in sharded)
        problems.append(f"shards of different splits ({parts})")
        return problems
    count = counts[0]
    by_index: dict[int, list[str]] = {}
    for f in sharded:
        if f.shard is not None:
            by_index.setdefault(f.shard.index, []).append(str(f.path))
    for index, where in sorted(by_index.items()):
        if len(where) > 1:
            problems.append(f"shard {index}/{count} is given more than once: {', '.join(where)}")
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        problems.append(f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} (of {count})")
    return problems


@dataclass
class Merged:
    into: Path
    scenarios: int
    errors: int
    junit_cases: int | None
    warnings: list[str]


def merge(dirs: Sequence[Path], into: Path, *, junit: Sequence[Path] | None = None, link: bool = False) -> Merged:
    """Check and merge ``dirs`` into the new folder ``into``; MergeError naming what is wrong."""
    if not dirs:
        raise MergeError("give at least one results folder to merge")
    folders = [read_folder(Path(d)) for d in dirs]
    check(folders)
    junit_files = _junit_files(folders, junit)
    problems = [p for i, f in enumerate(folders) for p in _inconsistencies(f, junit_files[i] if junit_files else None)]
    if problems:
        raise MergeError("cannot merge: files of a folder disagree:" + "".join(f"\n  {p}" for p in problems[:20]))
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise MergeError(f"--into {into}: exists and is not an empty folder; merge into a new folder")
    into.mkdir(parents=True, exist_ok=True)
    copy = os.link if link else shutil.copy2
    pairs = [(f, name) for f in folders for name in f.folders()[: len(f.metrics)]]
    for f, name in pairs:
        shutil.copytree(f.path / name, into / name, copy_function=copy)
    entries = sorted(
        ((name, m) for f in folders for name, m in zip(f.folders(), f.metrics, strict=False)),
        key=lambda pair: pair[0] + "\0",
    )
    metrics = [m for _, m in entries]
    errors = sorted((e for f in folders for e in f.errors), key=lambda e: e.scenario)
    document, warnings = _all_metrics(folders, metrics, errors)
    servers, moved = _endpoints(folders)
    if moved:
        warnings.append(
            "the folders' model servers differ (not part of the fingerprint; run.json lists each): " + moved
        )
    info = RunInfo(
        fingerprint=next((f for f in folders if f.metrics), folders[0]).fingerprint,
        pytest_tau2=__version__,
        started=min((f.started for f in folders if f.started), default=None),
        resumed=False,
        shard=None,
        merged={
            "at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "from": [{"folder": str(f.path), "shard": str(f.shard) if f.shard else None} for f in folders],
        },
        **({"endpoints": servers} if servers else {}),
    )
    files.write_json(into / RUN_FILE, info.document())
    cases = merge_junit(junit_files, into / JUNIT_NAME) if junit_files else None
    run = RunFiles(into, metrics, errors, document, _summary(folders, metrics, errors))
    failed = write_views(run)  # each view on its own: one that fails never keeps the others from being written
    for name, exc in failed:  # an optional view of the merged files: never lose the merge over it
        warnings.append(f"{name} not written: {type(exc).__name__}: {exc}")
    required = [(name, exc) for name, exc in failed if VIEWS[name].required]
    if required:
        name, exc = required[0]
        raise exc
    return Merged(into, len(metrics), len(errors), cases, warnings)


def check_consistent(folder: ShardFolder) -> None:
    """Raise a MergeError naming where the folder's files disagree, as a merge checks them (its
    metrics.json files, all_metrics.json, and its junit.xml when it has one): for readers such as
    ``export`` that must not carry a tampered or half-written folder on."""
    junit = folder.path / JUNIT_NAME
    problems = _inconsistencies(folder, junit if junit.is_file() else None)
    if problems:
        raise MergeError(f"{folder.path}: files of the folder disagree:" + "".join(f"\n  {p}" for p in problems[:20]))


SCENARIO_CASE = re.compile(r"^test_scenario\[(?P<name>.+)\]$")


def _inconsistencies(folder: ShardFolder, junit: Path | None) -> list[str]:
    """Where a folder's metrics.json files, all_metrics.json and junit.xml disagree, by scenario."""
    problems: list[str] = []
    for entry in folder.metrics:
        path = folder.path / entry.folder / "metrics.json"
        try:
            saved = ScenarioRecord.read(files.loads(path.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError):
            problems.append(f"{entry.folder}: {path} is not readable as a metrics.json")
            continue
        differs = _differences(dict(entry.junit_properties()), dict(saved.junit_properties()))
        if differs:
            problems.append(f"{entry.folder}: {path} and {folder.path / 'all_metrics.json'} differ ({differs})")
    if junit is None:
        return problems
    try:
        cases = _junit_cases(junit)
    except JUnitMergeError as exc:
        return [*problems, str(exc)]
    names = folder.folders()
    for name in names:
        if name not in cases:
            problems.append(f"{name}: in {folder.path / 'all_metrics.json'} but no test case in {junit}")
    for name in sorted(set(cases) - set(names)):
        problems.append(f"{name}: a test case in {junit} but no entry in {folder.path / 'all_metrics.json'}")
    for entry in folder.metrics:
        found = cases.get(entry.folder)
        if found is not None:
            expected = dict(entry.junit_properties())
            differs = _differences(
                expected, {key: found[key] for key in expected if key in found}, ("all_metrics.json", "junit.xml")
            )
            if differs:
                problems.append(f"{entry.folder}: {junit} and {folder.path / 'all_metrics.json'} differ ({differs})")
    return problems


def _differences(
    a: dict[str, str], b: dict[str, str], names: tuple[str, str] = ("all_metrics.json", "metrics.json")
) -> str:
    keys = [key for key in dict.fromkeys([*a, *b]) if a.get(key) != b.get(key)]
    return "; ".join(f"{key}: {a.get(key)!r} in {names[0]}, {b.get(key)!r} in {names[1]}" for key in keys[:4])


def _junit_cases(path: Path) -> dict[str, dict[str, str]]:
    """Scenario (or trial) name -> the JUnit properties of its test case."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise JUnitMergeError(f"cannot read the JUnit file {path}: {exc}") from None
    cases: dict[str, dict[str, str]] = {}
    by_suite = suite_properties(root)  # --tau2-junit-properties suite (the default) keeps them there
    for case in root.iter("testcase"):
        match = SCENARIO_CASE.match(case.get("name") or "")
        if match:
            props = {str(p.get("name")): str(p.get("value")) for p in case.iter("property")}
            cases[match.group("name")] = {**by_suite.get(match.group("name"), {}), **props}
    return cases


def _endpoints(folders: Sequence[ShardFolder]) -> tuple[dict[str, Any], str]:
    """Each side's model server (one address, or the sorted addresses when the folders differ),
    and what differs, as text ('' when nothing does)."""
    by_side: dict[str, set[str]] = {}
    for f in folders:
        for side, where in (f.endpoints or {}).items():
            by_side.setdefault(side, set()).update(where if isinstance(where, list) else [str(where)])
    merged: dict[str, Any] = {}
    differ: list[str] = []
    for side, found in sorted(by_side.items()):
        names = sorted(found)
        merged[side] = names[0] if len(names) == 1 else names
        if len(names) > 1:
            differ.append(f"{side}: {', '.join(names)}")
    return merged, "; ".join(differ)


def _junit_files(folders: Sequence[ShardFolder], given: Sequence[Path] | None) -> list[Path]:
    if given:
        if len(given) != len(folders):
            raise MergeError(
                f"--junit names {len(given)} files for {len(folders)} folders: give one per folder, in order"
            )
        absent = [str(p) for p in given if not Path(p).is_file()]
        if absent:
            raise MergeError(f"--junit: no such file: {', '.join(absent)}")
        return [Path(p) for p in given]
    found = [f.path / JUNIT_NAME for f in folders]
    have = [p for p in found if p.is_file()]
    if have and len(have) < len(found):
        lacking = [str(p.parent) for p in found if not p.is_file()]
        raise MergeError(
            f"{JUNIT_NAME} is in {len(have)} of {len(found)} folders (not in {', '.join(lacking)}): "
            "run every shard with --junitxml=<results dir>/junit.xml, or name the files with --junit"
        )
    return have


def _all_metrics(
    folders: Sequence[ShardFolder], metrics: list[ScenarioRecord], errors: list[ErrorEntry]
) -> tuple[RunMetrics, list[str]]:
    other: dict[str, Any] = {}
    warnings: list[str] = []
    keys = sorted({k for f in folders for k in f.other})
    for key in keys:
        if key == "pass_hat_k":  # computed over the whole run, not per shard
            from pytest_tau2.report.leaderboard import pass_hat_k_document

            other[key] = pass_hat_k_document(metrics, [e.scenario for e in errors])
            continue
        if key == "judge_agreement":  # over the whole run's assertions, like the intervals
            from pytest_tau2.report import agreement

            block = agreement.document(metrics)
            if block is not None:
                other[key] = block
            continue
        if key == "voice":  # the calls' figures, over every turn of the whole run
            from pytest_tau2.report import calls

            voice = calls.document(metrics)
            if voice is not None:
                other[key] = voice
            continue
        if key == "intervals":  # also over the whole run, at the shards' level
            from pytest_tau2.report import uncertainty

            other[key] = uncertainty.document(metrics, [e.scenario for e in errors], _level(folders))
            continue
        values = {json.dumps(f.other.get(key), sort_keys=True, default=str) for f in folders}
        if len(values) == 1:
            other[key] = folders[0].other[key]
        else:
            warnings.append(f"all_metrics.json key {key!r} differs between folders and is left out of the merge")
    return RunMetrics.of(metrics, errors, **other), warnings


def _level(folders: Sequence[ShardFolder]) -> float:
    """The confidence level the shards' intervals were computed at (the first one's; default 0.95)."""
    for folder in folders:
        block = folder.other.get("intervals")
        if isinstance(block, dict) and isinstance(block.get("level"), int | float):
            return float(block["level"])
    return 0.95


def _summary(folders: Sequence[ShardFolder], metrics: list[ScenarioRecord], errors: list[ErrorEntry]) -> str:
    from pytest_tau2.report.summary import render

    text = render(metrics, errors, level=_level(folders))
    notes = [f"{f.label}: {f.note}" for f in folders if f.note]
    return "".join(f"{note}\n" for note in notes) + text


def main(argv: Sequence[str] | None = None, *, prog: str = "pytest-tau2 merge") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Merge the results folders of a sharded run (--tau2-shard I/N) into one folder: scenario folders, "
            "all_metrics.json, all_summary.txt, run.json, report.html and junit.xml. Refuses folders of "
            "different settings or data, overlapping scenarios and missing shards."
        ),
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a shard's results folder")
    parser.add_argument("--into", type=Path, required=True, metavar="DIR", help="the merged folder (new or empty)")
    parser.add_argument(
        "--junit",
        type=Path,
        nargs="+",
        metavar="FILE",
        help=f"the shards' JUnit files, one per DIR, in order (default: DIR/{JUNIT_NAME} when every DIR has one)",
    )
    parser.add_argument("--link", action="store_true", help="hard-link scenario files instead of copying them")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        merged = merge(args.dirs, args.into, junit=args.junit, link=args.link)
    except (MergeError, JUnitMergeError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: {exc.strerror or exc}: {exc.filename or ''}", file=sys.stderr)
        return 2
    for warning in merged.warnings:
        print(f"{prog}: warning: {warning}", file=sys.stderr)
    junit = f", {merged.junit_cases} JUnit test cases" if merged.junit_cases is not None else ""
    print(
        f"merged {len(args.dirs)} folders: {merged.scenarios} results, {merged.errors} errors without a result{junit}"
    )
    print((merged.into / "all_summary.txt").read_text("utf-8").rstrip())
    print(f"results: {merged.into}")
    return 0
