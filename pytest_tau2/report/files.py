"""Write one scenario's results: metrics.json, transcript.json, scenario_config/, judge and DB files.

Every file is written atomically (temp file + rename) as soon as the scenario finishes, so an
interrupted run keeps everything that finished.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pytest_tau2.storage.atomic import write_text_atomic

if TYPE_CHECKING:
    from pytest_tau2.report.record import ScenarioRecord
    from pytest_tau2.scenario.outcome import ScenarioOutcome


def write_json(path: Path, data: object) -> None:
    """Atomically write ``data`` as indented JSON (dates and other objects via ``str``), in the umask's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, dumps(data))  # one write: json.dump writes every token on its own (60k for all_metrics)


def write_text(path: Path, text: str, *, make_parent: bool = True) -> None:
    """Atomically write ``text``; the file gets the umask's mode, as every result file (storage/atomic.py)."""
    if make_parent:
        path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)


def scenario_payload(
    folder: str,
    outcome: ScenarioOutcome,
    record: ScenarioRecord,
    *,
    metadata: dict[str, Any],
    tool_schemas: dict[str, Any],
    save_db: bool,
    redact: Callable[[Any], Any],
) -> dict[str, Any]:
    """Every file of one scenario as text, ready to travel in the item's report to the process
    that owns the results folder (xdist serializes it; see :func:`write_payload`); a phone call's
    ``call.wav`` travels as base64 text under ``binary_files``.

    ``redact`` is applied to everything that can carry text from a model or a setting (API keys
    must never reach a file); the DB dumps and tool schemas come from the scenario itself. The
    payload's ``metrics`` is the record's document: metrics.json's text is made from it alone
    (:func:`write_payload`).
    """
    scenario = outcome.scenario
    texts: dict[str, str] = {}
    transcript = {
        "scenario": scenario.name,
        "messages": outcome.conversation.transcript,
        "initialization": outcome.extra.get("initialization", []),
    }
    texts["transcript.json"] = dumps(redact(transcript))
    texts["scenario_config/agent_prompt.txt"] = scenario.get_agent_prompt()
    call = outcome.extra.get("voice")  # on a phone call the user was shown the call's prompt
    texts["scenario_config/user_prompt.txt"] = scenario.get_user_prompt() if call is None else call.user_prompt
    texts["scenario_config/metadata.json"] = dumps(redact(metadata))
    texts["scenario_config/tools.json"] = dumps_repeated(tool_schemas)
    if outcome.judge is not None:
        judge = {
            "model": outcome.judge.model,
            "nl_assertion_verdicts": outcome.judge.verdicts,
            "judge_input": outcome.judge.judge_input,
            "raw_reply": outcome.judge.raw_reply,
            "error": outcome.judge.error,
        }
        if outcome.judge.panel:  # a jury: each judge's verdicts and reply (one judge's file stays as it was)
            judge["judges"] = outcome.judge.panel
        texts["judge_result.json"] = dumps(redact(judge))
    if save_db:
        for side, db in outcome.final_dbs.items():
            if db is not None:
                texts["final_db.json" if side == "agent" else f"final_{side}_db.json"] = dumps(db)
    # Plain JSON values (what xdist can serialize); the indentation would not change them.
    safe_metrics = json.loads(json.dumps(redact(record.document()), default=str))
    payload: dict[str, Any] = {"folder": folder, "metrics": safe_metrics, "files": texts}
    line = outcome.extra.get("voice")
    if line is not None:  # binary files travel as base64 text (xdist serializes the payload)
        payload["binary_files"] = {"call.wav": base64.b64encode(line.call_wav()).decode("ascii")}
    return payload


_ORJSON_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_APPEND_NEWLINE
    | orjson.OPT_PASSTHROUGH_DATETIME  # dates via str(), as json's default=str writes them
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _plain(value: object) -> float | str:
    """What json's ``default=str`` would make of a value orjson does not know: a float subclass
    (numpy's float64) stays a number, anything else becomes its ``str``."""
    return float(value) if isinstance(value, float) else str(value)


def dumps(data: object) -> str:
    """Indented JSON as the result files hold it (dates and other objects via ``str``).

    orjson writes it (~10x faster than the json module, whose indented output is made by Python
    code: it was most of the time a scenario's files took). The text differs from ``json.dumps``
    in spelling: non-ASCII characters are written as UTF-8, not ``\\u`` escapes, and floats in
    their shortest form (``1e-05`` as ``1e-5``). Two values differ, neither of which these files
    hold: NaN and infinities become ``null`` (json writes the non-standard ``NaN``), and a plain
    ``Enum`` member its value (json, with ``default=str``, its name). What orjson refuses (keys
    that are not strings, integers past 64 bits) goes through the json module.
    """
    try:
        return orjson.dumps(data, default=_plain, option=_ORJSON_OPTIONS).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(data, indent=2, default=str) + "\n"


def loads(data: bytes | str) -> Any:
    """JSON text to values: orjson (~3x faster than the json module on result files), and the
    json module for what only it reads (``NaN``, ``Infinity``, which it writes), raising its error.
    A document nested past reading (orjson stops at 1,024 levels, the json module at the recursion
    limit) is a ValueError, as any unreadable JSON: every reader of a saved file already names it."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError("nested too deeply to read (JSON arrays or objects over 1,024 levels)") from None


_COMPACT_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def dumps_compact(data: object) -> str:
    """Compact JSON, dates and other objects via ``str`` (as :func:`dumps`, without indentation)."""
    try:
        return orjson.dumps(data, default=_plain, option=_COMPACT_OPTIONS).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


# compact JSON -> :func:`dumps` text, for values every scenario of a domain repeats (its tools)
_REPEATED: dict[str, str] = {}


def dumps_repeated(data: object) -> str:
    """:func:`dumps` of a value that many scenarios share, e.g. a domain's tool schemas.

    Indented JSON is written by Python code in the json module (its C encoder does no
    indentation): ~0.5 ms for retail's 16 KB of tool schemas, per scenario. The compact text,
    made by the C encoder in a few microseconds, names the value exactly, so the indented text
    is made once per distinct value.
    """
    compact = json.dumps(data, default=str)
    text = _REPEATED.get(compact)
    if text is None:
        if len(_REPEATED) >= 64:
            _REPEATED.clear()
        text = _REPEATED[compact] = dumps(data)
    return text


class ResultFileError(OSError):
    """A scenario's result file could not be written: ``str()`` is one line naming the folder, the
    file and the operating system's reason (``tau2_retail__3/transcript.json: No space left on
    device (errno 28)``)."""

    def __init__(self, folder: str, relative: str, exc: OSError) -> None:
        super().__init__(exc.errno, exc.strerror or str(exc))
        self.folder = folder
        self.relative = relative
        self.reason = describe_os_error(exc)

    def __str__(self) -> str:
        return f"{self.folder}/{self.relative}: {self.reason}"


def describe_os_error(exc: OSError) -> str:
    """The operating system's reason in a few words: ``No space left on device (errno 28)``."""
    if exc.strerror and exc.errno is not None:
        return f"{exc.strerror} (errno {exc.errno})"
    return str(exc) or type(exc).__name__


def write_payload(results_dir: Path, payload: dict[str, Any]) -> None:
    """Write one scenario's files; metrics.json last, so its presence means the rest is there.

    ``payload["metrics"]`` is a :meth:`~pytest_tau2.report.record.ScenarioRecord.document` (made
    by :func:`scenario_payload`, or by the resume of a saved result): plain values, in the
    file's key order, written as they are.

    metrics.json alone is written atomically (a temporary file renamed into place), and an
    earlier result's metrics.json is removed first: until the new one lands, the folder reads
    as unfinished (``--tau2-resume`` moves such leftovers aside). The other files are written in
    place: a temporary file and a rename each cost ~0.5 ms on ext4, ~2 ms per scenario, on the
    thread that reports the items (3.0 ms -> 1.4 ms for a retail scenario's six files).

    A file that cannot be written (a full disk) raises :class:`ResultFileError` naming it; no
    metrics.json is then written, so the folder reads as unfinished.
    """
    name = payload["folder"]
    folder = results_dir / name
    marker = folder / "metrics.json"
    relative = "metrics.json"
    try:
        marker.unlink(missing_ok=True)
        made: set[Path] = set()
        for relative, text in payload["files"].items():
            path = folder / relative
            if path.parent not in made:  # one mkdir per folder, not per file
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        for relative, encoded in payload.get("binary_files", {}).items():
            folder.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(base64.b64decode(encoded))
        relative = "metrics.json"
        write_text(marker, dumps(payload["metrics"]), make_parent=folder not in made)
    except ResultFileError:
        raise
    except OSError as exc:
        raise ResultFileError(name, relative, exc) from None
