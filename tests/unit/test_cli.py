"""The ``pytest-tau2`` console command dispatches to the data and bot commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_tau2.cli import main

DATA = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))


def test_no_arguments_prints_usage_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "pytest-tau2 data" in capsys.readouterr().err


def test_help_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "pytest -k tau2_retail" in capsys.readouterr().out


@pytest.mark.skipif(not (DATA / "tau2").is_dir(), reason="pinned tau2 data not available")
def test_data_verify_reports_the_pinned_domains(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "verify", "--data-dir", str(DATA), "--domain", "retail"]) == 0
    out = capsys.readouterr()
    assert "retail" in out.out + out.err


def test_data_verify_of_an_empty_folder_fails_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "verify", "--data-dir", str(tmp_path), "--domain", "retail"]) != 0
    out = capsys.readouterr()
    assert "fetch" in out.out + out.err


def test_an_unknown_command_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bogus"]) == 2
    assert "unknown command 'bogus'" in capsys.readouterr().err


def test_subcommand_help_names_the_console_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["data", "--help"])
    assert "usage: pytest-tau2 data" in capsys.readouterr().out
