"""The run's settings from pytest's invocation: ``--tau2-*`` options and ini values resolved
(pytest_tau2/settings), paths anchored at the rootdir, and the path options pytest may have misread.

pytest finds its rootdir before plugins add their options, so a path option given as two
arguments (``--tau2-results-dir DIR``) can be taken for a test path; this module refuses that
when it misled pytest and rewrites the arguments the xdist workers will see.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import itertools
import os
from pathlib import Path

import pytest

from pytest_tau2.errors import SettingsError
from pytest_tau2.settings import OPTIONS, Settings, all_options, resolve, shown


def settings_of(config: pytest.Config) -> Settings:
    """The controller's settings (a worker receives the controller's: worker_settings.py)."""
    check_separated_path_options(config)
    join_path_options(config)
    return settings_from_config(config)


PATH_OPTIONS = tuple(option.flag for option in OPTIONS if option.path)


def check_separated_path_options(config: pytest.Config) -> None:
    """Refuse ``--tau2-results-dir DIR`` when it has made pytest miss the project's configuration.

    pytest finds its rootdir and configuration file before plugins register their options, so
    it takes the DIR of ``--tau2-results-dir DIR`` for a test path; a DIR outside the project
    moves the search away from the project's pytest.ini/pyproject.toml (testpaths, addopts and
    the root conftest are then ignored). ``--tau2-results-dir=DIR`` cannot mislead it.
    """
    if config.inipath is not None:
        return
    missed = _config_file_between(config.invocation_params.dir, config.rootpath)
    if missed is None:
        return
    args = [str(a) for a in config.invocation_params.args]
    for flag, value in itertools.pairwise(args):
        if flag in PATH_OPTIONS and Path(value).exists():
            raise pytest.UsageError(
                f"write {flag}={value} (with '='): given as two arguments, pytest took {value} for a test path "
                f"while looking for the project's configuration and missed {missed}"
            )


def join_path_options(config: pytest.Config) -> None:
    """Rewrite ``--tau2-results-dir DIR`` as ``--tau2-results-dir=DIR`` in the invocation args.

    xdist starts its workers with the controller's invocation args, and a worker looks for its
    rootdir before the plugin's options are known: once this run has created DIR, a separated
    DIR would be taken for a test path there and move the worker's rootdir (and with it the
    project's conftest and ini file).
    """
    args = [str(a) for a in config.invocation_params.args]
    joined: list[str] = []
    skip = False
    for flag, value in itertools.zip_longest(args, args[1:]):
        if skip:
            skip = False
            continue
        if flag in PATH_OPTIONS and value is not None:
            joined.append(f"{flag}={value}")
            skip = True
        else:
            joined.append(flag)
    if joined != args:
        config.invocation_params = dataclasses.replace(config.invocation_params, args=tuple(joined))


def _config_file_between(start: Path, stop: Path) -> Path | None:
    """A pytest configuration file in ``start`` or its parents below ``stop``, if any."""
    for folder in (start, *start.parents):
        if folder == stop:
            return None
        for name in ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg"):
            if (folder / name).is_file():
                return folder / name
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "[tool.pytest" in pyproject.read_text("utf-8", errors="replace"):
            return pyproject
    return None


def settings_from_config(config: pytest.Config) -> Settings:
    cli = {o.name: config.getoption(f"tau2_{o.name}") for o in all_options()}
    ini = {o.name: config.getini(o.ini) for o in all_options()}
    try:
        values = resolve(cli, ini)
    except ValueError as exc:
        raise pytest.UsageError(shown(str(exc))) from None
    values["eval_data_root"] = str(config.rootpath / (values["eval_data_root"] or "data"))
    values["cassette_dir"] = str(config.rootpath / (values["cassette_dir"] or "cassettes"))
    if values["resume"]:
        resume = Path(values["resume"]).resolve()
        if values["results_dir"] and Path(values["results_dir"]).resolve() != resume:
            raise pytest.UsageError("--tau2-resume DIR continues the run in DIR: leave out --tau2-results-dir")
        values["results_dir"] = values["resume"] = str(resume)
    if values["results_dir"]:
        values["results_dir"] = str(Path(values["results_dir"]).resolve())
    else:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        values["results_dir"] = str(config.rootpath / "tau2-results" / stamp)
    settings = Settings(**values)
    if not _configured(cli, ini):
        return settings  # the defaults are valid as they are (and checking them imports the participants)
    from pytest_tau2.run import participants
    from pytest_tau2.run.budget import unpriced_problem

    try:
        participants.validate_settings(settings)  # the model roles and each domain's section, made once
        problem = unpriced_problem(settings)  # a budget or cost limit cannot be kept on an unpriced model
        if problem is not None:
            raise SettingsError(problem)
    except SettingsError as exc:
        raise pytest.UsageError(shown(str(exc), settings.secrets())) from None  # usage errors echo options
    return settings


def _configured(cli: dict[str, object], ini: dict[str, object]) -> bool:
    """Whether any ``--tau2-*`` option is given (flag, ini key or environment variable)."""
    given = any(value is not None for value in cli.values()) or any(
        value not in (None, False, "") for value in ini.values()
    )
    return given or any(option.env is not None and option.env in os.environ for option in all_options())
