"""Write one scenario's results: metrics.json, transcript.json, scenario_config/, judge and DB files.

Every file is written atomically (temp file + rename) as soon as the scenario finishes, so an
interrupted run keeps everything that finished.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_tau2.run.outcome import ScenarioOutcome


def write_json(path: Path, data: Any) -> None:
    """Atomically write ``data`` as indented JSON (dates and other objects via ``str``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def scenario_dir(results_dir: Path, name: str) -> Path:
    return results_dir / name


def write_scenario_results(
    folder: Path,
    outcome: ScenarioOutcome,
    metrics: dict[str, Any],
    *,
    metadata: dict[str, Any],
    tool_schemas: dict[str, Any],
    save_db: bool,
    redact: Callable[[Any], Any],
) -> None:
    """Every file of one scenario; metrics.json last, so its presence means the rest is there.

    ``redact`` is applied to everything that can carry text from a model or a setting (API keys
    must never reach a file); the DB dumps and tool schemas come from the scenario itself.
    """
    scenario = outcome.scenario
    transcript = {
        "scenario": scenario.name,
        "messages": outcome.conversation.transcript,
        "initialization": outcome.extra.get("initialization", []),
    }
    write_json(folder / "transcript.json", redact(transcript))
    config_dir = folder / "scenario_config"
    write_text(config_dir / "agent_prompt.txt", scenario.get_agent_prompt())
    write_text(config_dir / "user_prompt.txt", scenario.get_user_prompt())
    write_json(config_dir / "metadata.json", redact(metadata))
    write_json(config_dir / "tools.json", tool_schemas)
    if outcome.judge is not None:
        judge = {
            "model": outcome.judge.model,
            "nl_assertion_verdicts": outcome.judge.verdicts,
            "judge_input": outcome.judge.judge_input,
            "raw_reply": outcome.judge.raw_reply,
            "error": outcome.judge.error,
        }
        write_json(folder / "judge_result.json", redact(judge))
    if save_db:
        for side, db in outcome.final_dbs.items():
            if db is not None:
                write_json(folder / ("final_db.json" if side == "agent" else f"final_{side}_db.json"), db)
    write_json(folder / "metrics.json", redact(metrics))
