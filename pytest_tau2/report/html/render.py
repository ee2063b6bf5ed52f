"""Assemble report.html: the overview rendered here, the table and panels drawn by the page.

The file is self-contained: styles, script and charts are inline, and the data travels as
JSON inside ``<script type="application/json">`` elements. The scenario table reads one small
index; each scenario's details (transcript, checks, judge, definition) sit in their own
element and are parsed only when the panel opens, so a 2,285-scenario report opens as fast
as a small one (bench/results/report.md).
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache, PackageLoader, Template, select_autoescape
from jinja2.bccache import Bucket
from markupsafe import Markup

from pytest_tau2.report import agreement, failure_modes, files, null_baseline, uncertainty
from pytest_tau2.report.compare_runs import CompareError, Comparison, RunSide, compare
from pytest_tau2.report.html import formatting
from pytest_tau2.report.html.loader import Run, ScenarioResult, known_fields, load_details, load_run, raw_files
from pytest_tau2.report.html.overview_charts import overview_charts
from pytest_tau2.report.html.stats import OUTCOMES, ci_level, failed_signals, overview, page_signals, signal_keys
from pytest_tau2.stats import flip_rate
from pytest_tau2.storage.atomic import write_text_atomic

COMPRESS_ABOVE = 4_000_000
"""Scenario details above this many bytes of JSON in all are stored gzip-compressed (base64),
CHUNK scenarios to an element, and inflated by the browser's DecompressionStream when a panel
opens. On the 2,285-scenario telecom bench (51 MB of details JSON) this gives a report of about
12 MB; one gzip stream per scenario gave 19 MB, as a scenario alone repeats too little."""
CHUNK = 32


@dataclass
class Detail:
    """One ``<script>`` element of scenario details: one scenario's JSON, or a compressed chunk."""

    element_id: str
    text: str
    compressed: bool


def write_report(results_dirs: list[Path], output: Path) -> Path:
    """Build the HTML report of one results folder, or a comparison of several, at ``output``.

    Raises :class:`~pytest_tau2.report.html.loader.ReportInputError` naming the folder or
    file that cannot be read. The file is written atomically; returns its path.
    """
    if not results_dirs:
        raise ValueError("write_report needs at least one results folder")
    return write_runs([load_run(Path(d)) for d in results_dirs], output)


def write_runs(runs: list[Run], output: Path) -> Path:
    """:func:`write_report` of runs already loaded (the end of a run: :func:`loader.run_of`)."""
    output = Path(output)
    html = render_report(runs, output.parent)
    output.parent.mkdir(parents=True, exist_ok=True)
    # backslashreplace: a lone surrogate read from a folder written before replies were escaped
    # (docs/faults.md) is shown as its escape instead of losing the whole report; the mode is
    # the umask's, as for every other result file.
    write_text_atomic(output, html, errors="backslashreplace")
    return output


def run_labels(runs: list[Run]) -> list[str]:
    """Folder names, made unique with their parents (``a/out`` and ``b/out``) when they collide."""
    labels = [r.path.resolve().name for r in runs]
    depth = 1
    while len(set(labels)) < len(labels) and depth < 4:
        depth += 1
        labels = ["/".join(r.path.resolve().parts[-depth:]) for r in runs]
    return [f"{label} ({i + 1})" if labels.count(label) > 1 else label for i, label in enumerate(labels)]


def render_report(runs: list[Run], base: Path, *, compress: bool | None = None) -> str:
    """The whole page as text; links to raw files are relative to ``base`` (the report's folder)."""
    labels = run_labels(runs)
    overviews = [overview(run, label) for run, label in zip(runs, labels, strict=True)]
    index, details = _payload(runs, labels, base, compress)
    return template().render(
        paired=paired_comparisons(runs, labels) if len(runs) > 1 else [],
        title=_title(labels),
        runs=overviews,
        comparison=len(runs) > 1,
        charts=overview_charts(overviews),
        agreements=[agreement_view(run) for run in runs],
        failure_modes=[failure_modes.failure_modes(list(run.scenarios)) for run in runs],
        paths=[str(run.path.resolve()) for run in runs],
        outcomes=OUTCOMES,
        css=Markup(_asset("report.css")),
        js=Markup(_asset("report.js")),
        index=Markup(_script_json(index)),
        details=details,
    )


@dataclass
class Paired:
    """The paired comparison of one run (B) with the first (A), or why it was not made."""

    a: str
    b: str
    result: Comparison | None
    refused: str = ""


def paired_comparisons(runs: list[Run], labels: list[str]) -> list[Paired]:
    """Each run after the first against the first, paired over tasks (report/compare_runs.py)."""
    first = RunSide(labels[0], list(runs[0].scenarios), [e.name for e in runs[0].errors_without_result])
    out = []
    for run, label in zip(runs[1:], labels[1:], strict=True):
        other = RunSide(label, list(run.scenarios), [e.name for e in run.errors_without_result])
        try:
            out.append(Paired(labels[0], label, compare(first, other, level=ci_level(runs[0]))))
        except CompareError as exc:
            out.append(Paired(labels[0], label, None, str(exc)))
    return out


class _QuietBytecodeCache(FileSystemBytecodeCache):
    """Jinja2's own cache of compiled templates, in its per-user folder of the temporary directory
    (created private; jinja2 refuses one another user owns); a cache that cannot be read or
    written only means compiling again: never an error of the report."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # unreadable, truncated (pickle's error), another jinja2's: compiled again
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _bytecode_cache() -> BytecodeCache | None:
    if os.environ.get("TAU2_NO_TEMPLATE_CACHE"):
        return None
    try:
        return _QuietBytecodeCache()
    except (OSError, RuntimeError):  # no usable temporary folder (jinja2 raises RuntimeError for an unsafe one)
        return None


@functools.cache
def template() -> Template:
    """The page template, once per process. Compiling it takes ~50 ms; jinja2's bytecode cache
    (keyed by the template's source, so an edited template compiles again) makes it ~1 ms from
    the second run on. A long run loads it while it waits for its conversations
    (plugin/prefetching.py), so the end of the run does not pay for it."""
    env = Environment(
        loader=PackageLoader("pytest_tau2.report.html", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters.update(
        percent=formatting.percent,
        count=formatting.count,
        seconds=formatting.seconds,
        usd=formatting.usd,
        number=formatting.number,
        tojson_compact=lambda v: json.dumps(v, sort_keys=True, default=str),
    )
    return env.get_template("report.html.j2")


def _title(labels: list[str]) -> str:
    return f"tau2 report: {labels[0]}" if len(labels) == 1 else f"tau2 comparison: {' vs '.join(labels)}"


def _asset(name: str) -> str:
    return resources.files("pytest_tau2.report.html").joinpath("assets", name).read_text("utf-8")


def _script_json(data: object) -> str:
    """JSON safe inside a <script> element (no ``</script>``, no ``<!--``)."""
    text = files.dumps_compact(data)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _relative(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` (resolved already: the caller resolves it once per page)."""
    try:
        return Path(os.path.relpath(path.resolve(), base)).as_posix()
    except ValueError:  # another drive on Windows
        return path.resolve().as_uri()


def _payload(runs: list[Run], labels: list[str], base: Path, compress: bool | None) -> tuple[Any, list[Detail]]:
    rows: dict[str, dict[str, Any]] = {}
    keys = signal_keys()
    base = base.resolve()
    texts: list[tuple[str, str]] = []
    cells: list[dict[str, Any]] = []
    for r, run in enumerate(runs):
        unstable = unstable_tasks(run)
        split = agreement.disagreements(list(run.scenarios))
        for result in run.scenarios:
            row = rows.setdefault(result.key, _row(result, len(runs)))
            element_id = f"d{r}-{len(texts)}"
            row["runs"][r] = _cell(result, element_id, keys)
            if result.scenario in unstable:
                row["runs"][r]["mk"] = [*row["runs"][r]["mk"], unstable[result.scenario]]
            if split.get(result.folder):
                row["runs"][r]["mk"] = [*row["runs"][r]["mk"], f"judges disagree: {split[result.folder]}"]
            cells.append(row["runs"][r])
            folder = run.folders.get(result.key)
            detail = load_details(folder)
            detail["metrics"] = result.model_dump(mode="json")
            if folder:
                prefix = _relative(folder, base)
                detail["files"] = [[name, f"{prefix}/{name}"] for name in raw_files(folder)]
                if (folder / "call.wav").is_file():  # a phone call: the panel's player (docs/voice.md)
                    detail["call"] = f"{prefix}/call.wav"
            else:
                detail["files"] = []
            texts.append((element_id, _script_json(detail)))
        for error in run.errors_without_result:
            row = rows.setdefault(error.name, _row_for_error(error.name, len(runs)))
            row["runs"][r] = {"o": "error", "f": [], "err": error.reason or "ended before writing a result", "d": None}
    total = sum(len(text) for _, text in texts)
    squeeze = total > COMPRESS_ABOVE if compress is None else compress
    details = _compressed(texts, cells) if squeeze else [Detail(eid, text, False) for eid, text in texts]
    index = {
        "runs": [
            {"label": label, "path": _relative(run.path, base), "summary": run.summary_text}
            for label, run in zip(labels, runs, strict=True)
        ],
        "rows": list(rows.values()),
        "known": sorted({*known_fields(), *keys}),  # the registered signals' fields: the panel's signal list
        "signals": page_signals(),
    }
    return index, details


def agreement_view(run: Run) -> dict[str, Any] | None:
    """A run's judge agreement (several judges only): the summary's lines and the trials the judges split on."""
    block = agreement.document(list(run.scenarios))
    if block is None:
        return None
    split = agreement.disagreements(list(run.scenarios))
    return {"lines": agreement.summary_lines(block), "split": sorted(split.items())}


def unstable_tasks(run: Run) -> dict[str, str]:
    """Task -> its marker (``unstable: flip 25%``) for the tasks whose trials disagree (several trials)."""
    outcomes = uncertainty.headline_outcomes(run.scenarios, [e.name for e in run.errors_without_result])
    rates = {task: flip_rate(values) for task, values in outcomes.items() if len(values) >= 2}
    return {task: f"unstable: flip {100 * rate:.0f}%" for task, rate in rates.items() if rate > 0}


def _compressed(texts: list[tuple[str, str]], cells: list[dict[str, Any]]) -> list[Detail]:
    """Chunks of CHUNK scenarios as ``{detail id: details}``, gzip + base64; each cell learns its chunk."""
    out = []
    for start in range(0, len(texts), CHUNK):
        chunk_id = f"z{start // CHUNK}"
        part = texts[start : start + CHUNK]
        for cell in cells[start : start + CHUNK]:
            cell["z"] = chunk_id
        document = "{" + ",".join(f'"{eid}":{text}' for eid, text in part) + "}"
        packed = base64.b64encode(gzip.compress(document.encode("utf-8"), 6, mtime=0)).decode("ascii")
        out.append(Detail(chunk_id, packed, True))
    return out


def _row(result: ScenarioResult, n_runs: int) -> dict[str, Any]:
    return {
        "key": result.key,
        "name": result.scenario,
        "domain": result.domain or result.scenario.split("__")[0],
        "desc": result.description,
        "tau2_id": result.tau2_id,
        "trial": result.shown_trial,
        "runs": [None] * n_runs,
    }


def _row_for_error(name: str, n_runs: int) -> dict[str, Any]:
    return {"key": name, "name": name, "domain": name.split("__")[0], "desc": "", "tau2_id": None, "trial": None,
            "runs": [None] * n_runs}  # fmt: skip


def _cell(result: ScenarioResult, element_id: str, keys: dict[str, str]) -> dict[str, Any]:
    """What the table shows of one scenario in one run (short keys: 2,285 rows travel in it)."""
    return {
        "o": result.outcome,
        "f": failed_signals(result, keys),
        "sr": result.stop_reason,
        "turns": result.agent_turns,
        "te": result.tool_errors,
        "dur": round(result.duration_s, 3),
        "cost": result.cost_usd,
        "tok": result.total_tokens,
        "rw": result.signal("tau2_reward"),
        "mk": [*result.markers, null_baseline.MARK] if null_baseline.passes_without_work(result) else result.markers,
        "err": (result.infrastructure_error or "")[:300],
        "d": element_id,
    }
