"""``pytest-tau2 list``: the scenarios pytest collects, under domain headings, without parsing a DB.

Each case runs the command in a fresh process (``python -m pytest_tau2.cli list``): in this
repository (whose root conftest imports ``scenarios``), and in a user's project started from
another folder (``--rootdir``) or from a subfolder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin.conftest import Project
from tests.support.tau2_data import DATA_DIR, REPO, requires_data

HEADING = re.compile(r"^(?P<domain>\w+): (?P<text>.*)$", re.MULTILINE)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TAU2_", "CI"))}
    return {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TAU2_DATA_DIR": str(DATA_DIR), **extra}


def _list(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "list", *args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _headings(out: str) -> dict[str, str]:
    return {m["domain"]: m["text"] for m in HEADING.finditer(out) if m["domain"] != "rootdir"}


def _names(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines() if line.startswith("  ") and "__" in line]


@requires_data("retail", "airline", "telecom")
def test_this_repository_by_domain_with_counts_and_split_markers() -> None:
    done = _list()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"rootdir: {REPO}\n391 scenarios in 6 domains\n")
    assert _headings(done.stdout) == {
        "restaurant": "6 scenarios",
        "tau2_airline": "50 scenarios (30 train, 20 test)",
        "tau2_retail": "114 scenarios (74 train, 40 test)",
        "tau2_telecom": "114 scenarios (74 train, 40 test)",
        "tau2_mock": "10 scenarios",
        "tau2_banking_knowledge": "97 scenarios",
    }
    assert "  tau2_retail__5    tau2_split_test\n" in done.stdout  # split marker beside the name
    names = _names(done.stdout)
    retail = [n for n in names if n.startswith("tau2_retail__")]
    assert retail[:3] == ["tau2_retail__0", "tau2_retail__1", "tau2_retail__2"]  # numeric order
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert sorted(names) == sorted(re.findall(r"test_scenario\[(\w+)\]", collected))  # what pytest runs


PARSE_PROBE = """
import json
import json
import os

import pytest_tau2.data.parsing as parsing

_parsed = parsing.parsed
seen = []


def parsed(path, read, hint=""):  # every data file pytest-tau2 parses goes through parsing.parsed
    seen.append(str(path))
    return _parsed(path, read, hint)


parsing.parsed = parsed


def pytest_unconfigure(config):
    with open(os.environ["TAU2_PARSE_PROBE_OUT"], "w", encoding="utf-8") as out:
        json.dump(seen, out)
"""


@requires_data("retail", "airline", "telecom")
def test_listing_parses_no_database(tmp_path: Path) -> None:
    """The data files the collecting process parses: the task lists, never a database."""
    (tmp_path / "tau2_parse_probe.py").write_text(PARSE_PROBE, "utf-8")
    out = tmp_path / "parsed.json"
    probe_env = _env(PYTHONPATH=str(tmp_path), TAU2_PARSE_PROBE_OUT=str(out))
    done = _list("-p", "tau2_parse_probe", env=probe_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == _list().stdout  # the probe changes nothing
    parsed = [Path(p).name for p in json.loads(out.read_text("utf-8"))]
    assert "split_tasks.json" in parsed
    assert not {"db.json", "db.toml", "user_db.toml", "orders.json"} & set(parsed), parsed


@requires_data("retail")
def test_domain_filter_and_pytest_options_pass_through() -> None:
    done = _list("--domain", "tau2_retail,restaurant", "-m", "tau2_split_test or not tau2_split_train")
    assert done.returncode == 0, done.stderr
    assert _headings(done.stdout) == {"restaurant": "6 scenarios", "tau2_retail": "40 scenarios (40 test)"}


def test_an_unknown_domain_is_refused_with_suggestions() -> None:
    done = _list("--domain", "resturant")
    assert done.returncode == 2
    assert done.stderr.startswith("pytest-tau2 list: no domain 'resturant' (did you mean restaurant")


def test_missing_tau2_data_lists_the_domain_as_unavailable_with_the_fix(tmp_path: Path) -> None:
    env = _env(TAU2_DATA_DIR=str(tmp_path / "nowhere"), HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = _list("--domain", "tau2_retail", "--domain", "restaurant", env=env)
    assert done.returncode == 0, done.stderr
    assert _headings(done.stdout)["tau2_retail"] == "unavailable"
    assert f"    DataError: tau2 data folder {tmp_path / 'nowhere'} does not exist" in done.stdout
    assert "python -m pytest_tau2.data fetch --domain retail" in done.stdout
    assert _headings(done.stdout)["restaurant"] == "6 scenarios"


def test_a_user_project_from_another_folder_or_a_subfolder(project: Project, tmp_path: Path) -> None:
    project.restaurant()
    project.write("pytest.ini", "[pytest]\naddopts = -p no:randomly\n")
    project.write("sub/notes.txt", "a subfolder of the project\n")
    from_elsewhere = _list("--rootdir", str(project.path), cwd=tmp_path)
    from_inside = _list(cwd=project.path / "sub")
    for done in (from_elsewhere, from_inside):
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"rootdir: {project.path}\n6 scenarios in 1 domain\n")
        assert _headings(done.stdout) == {"restaurant": "6 scenarios"}


def test_a_folder_without_scenarios_says_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    done = _list(cwd=tmp_path)
    assert done.returncode == 1
    assert "no scenario collected in" in done.stderr and "from pytest_tau2 import test_scenario" in done.stderr


def test_a_collection_error_shows_pytest_s_own_output(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    (tmp_path / "conftest.py").write_text("import my_missing_scenarios\n", "utf-8")
    done = _list(cwd=tmp_path)
    assert done.returncode == 2
    assert "pytest could not collect in" in done.stderr
    assert "No module named 'my_missing_scenarios'" in done.stderr


def test_the_command_is_in_the_cli_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "--help"], capture_output=True, text=True, check=True, timeout=60
    )
    assert "pytest-tau2 list [--domain D] [--rootdir DIR]" in done.stdout


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_list_help_names_its_options(flag: str) -> None:
    done = _list(flag)
    assert done.returncode == 0
    assert "--domain D" in done.stdout and "--rootdir DIR" in done.stdout
