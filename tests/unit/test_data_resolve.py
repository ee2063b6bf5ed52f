"""Finding the tau2 data folder, verifying it against the pin, and keeping paths inside it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import platformdirs
import pytest

from pytest_tau2.data import manifest
from pytest_tau2.data.__main__ import main
from pytest_tau2.data.manifest import DOMAIN_FILES, MANIFEST, PIN_COMMIT, PIN_SOURCE
from pytest_tau2.data.resolve import (
    DataPin,
    clear_verify_cache,
    data_path,
    default_cache_dir,
    resolve_data_dir,
    sha256_file,
    verify,
)
from pytest_tau2.errors import DataError, DataPathError

REAL_DATA = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
needs_real_data = pytest.mark.skipif(
    not (REAL_DATA / "tau2" / "domains").is_dir(), reason=f"pinned tau2 data not found at {REAL_DATA}"
)

RETAIL_POLICY = "tau2/domains/retail/policy.md"
RETAIL_DB = "tau2/domains/retail/db.json"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Start every test with no data dir configured and an empty private cache."""
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setenv("PYTEST_TAU2_CACHE_DIR", str(tmp_path / "user-cache"))


@pytest.fixture
def retail_copy(tmp_path: Path) -> Path:
    """A private copy of just the retail domain's run-time files (safe to damage)."""
    if not (REAL_DATA / "tau2").is_dir():
        pytest.skip(f"pinned tau2 data not found at {REAL_DATA}")
    root = tmp_path / "data"
    for relative in DOMAIN_FILES["retail"]:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_DATA / relative, target)
    return root


# --- manifest -------------------------------------------------------------------------


def test_manifest_constants_are_well_formed() -> None:
    assert len(PIN_COMMIT) == 40 and int(PIN_COMMIT, 16) >= 0
    assert PIN_COMMIT == "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
    assert PIN_SOURCE == "github.com/sierra-research/tau2-bench"
    assert len(MANIFEST) == 34 + 815  # banking_knowledge's files come from banking_knowledge_manifest.json
    for relative, (sha, size) in MANIFEST.items():
        assert relative.startswith("tau2/") and len(sha) == 64 and size > 0
    assert MANIFEST[RETAIL_DB] == ("413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765", 2811616)


def test_domain_files_are_manifest_entries() -> None:
    assert set(DOMAIN_FILES) == {"retail", "airline", "telecom", "mock", "banking_knowledge"}
    for files in DOMAIN_FILES.values():
        assert set(files) <= set(MANIFEST)
    assert "tau2/user_simulator/simulation_guidelines.md" in DOMAIN_FILES["airline"]
    assert "tau2/user_simulator/simulation_guidelines_tools.md" in DOMAIN_FILES["telecom"]
    assert len(DOMAIN_FILES["telecom"]) == 7


@needs_real_data
def test_embedded_manifest_matches_shared_manifest_json() -> None:
    import json

    shipped = json.loads((REAL_DATA / "MANIFEST.json").read_text())
    assert shipped["commit"] == manifest.PIN_COMMIT
    files = {k: (v["sha256"], v["bytes"]) for k, v in shipped["files"].items()}
    assert {k: files.get(k) for k in MANIFEST} == MANIFEST
    assert set(files) == set(MANIFEST)  # every file of the shared folder is embedded, banking's 815 too


# --- resolution order -----------------------------------------------------------------


def test_default_cache_dir_uses_override_parent_and_commit(tmp_path: Path) -> None:
    assert default_cache_dir() == tmp_path / "user-cache" / "data" / PIN_COMMIT[:12]


def test_default_cache_dir_falls_back_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_TAU2_CACHE_DIR")
    expected = Path(platformdirs.user_cache_dir("pytest-tau2")) / "data" / PIN_COMMIT[:12]
    assert default_cache_dir() == expected


def _make_cache() -> Path:
    cache = default_cache_dir()
    (cache / "tau2").mkdir(parents=True)
    return cache


def test_explicit_beats_env_and_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _make_cache()
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(tmp_path / "explicit") == tmp_path / "explicit"
    assert resolve_data_dir(str(tmp_path / "explicit")) == tmp_path / "explicit"


def test_env_beats_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _make_cache()
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(None) == tmp_path / "from-env"


def test_cache_used_when_it_holds_tau2() -> None:
    cache = _make_cache()
    assert resolve_data_dir(None) == cache


def test_cache_ignored_without_tau2_folder() -> None:
    default_cache_dir().mkdir(parents=True)
    assert resolve_data_dir(None) is None


def test_nothing_configured_gives_none() -> None:
    assert resolve_data_dir(None) is None


def test_empty_values_count_as_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", "")
    assert resolve_data_dir("") is None
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path))
    assert resolve_data_dir("") == tmp_path


def test_explicit_expands_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_data_dir("~/tau2data") == tmp_path / "tau2data"


# --- verify ---------------------------------------------------------------------------


@needs_real_data
@pytest.mark.parametrize("domain", sorted(DOMAIN_FILES))
def test_verify_real_pinned_copy(domain: str) -> None:
    pin = verify(REAL_DATA, domain)
    assert isinstance(pin, DataPin)
    assert pin.pinned is True
    assert pin.commit == PIN_COMMIT and pin.source == PIN_SOURCE
    assert pin.root == REAL_DATA.resolve()
    assert pin.files == {relative: MANIFEST[relative][0] for relative in DOMAIN_FILES[domain]}
    assert pin.to_dict() == {
        "source": PIN_SOURCE,
        "commit": PIN_COMMIT,
        "pinned": True,
        "data_dir": str(REAL_DATA.resolve()),
    }


def test_verify_runs_once_per_root_and_domain(retail_copy: Path) -> None:
    first = verify(retail_copy, "retail")
    (retail_copy / RETAIL_POLICY).write_text("changed after verification\n")
    # Cached: the damage is not seen again in this process...
    assert verify(retail_copy, "retail") is first
    # ...until the cache is cleared.
    clear_verify_cache()
    with pytest.raises(DataError, match="sha256 mismatch"):
        verify(retail_copy, "retail")


def test_verify_missing_file_names_path_and_fixes(retail_copy: Path) -> None:
    (retail_copy / RETAIL_DB).unlink()
    with pytest.raises(DataError) as caught:
        verify(retail_copy, "retail")
    message = str(caught.value)
    assert f"{retail_copy.resolve() / RETAIL_DB}: missing" in message
    assert MANIFEST[RETAIL_DB][0] in message
    assert "TAU2_DATA_DIR" in message and "--tau2-data-dir" in message
    assert "python -m pytest_tau2.data fetch" in message
    assert "--tau2-allow-unpinned-data" in message
    # Only the missing file is reported.
    assert RETAIL_POLICY not in message


def test_verify_follows_symlinks_inside_the_root_and_refuses_those_leading_out(
    retail_copy: Path, tmp_path: Path
) -> None:
    """verify resolves each folder once and each file with one lstat: a symlinked file or folder
    that stays inside the data root is checked where it points, one leading out is refused."""
    policy = retail_copy / RETAIL_POLICY
    kept = retail_copy / "kept-policy.md"
    policy.rename(kept)
    policy.symlink_to(kept)  # a file link inside the root
    domain = policy.parent
    moved = retail_copy / "retail-real"
    domain.rename(moved)
    domain.symlink_to(moved, target_is_directory=True)  # the domain folder itself a link
    pin = verify(retail_copy, "retail")
    assert pin.pinned and pin.files[RETAIL_POLICY] == MANIFEST[RETAIL_POLICY][0]
    clear_verify_cache()
    outside = tmp_path / "outside.md"
    shutil.copyfile(kept, outside)
    (moved / Path(RETAIL_POLICY).name).unlink()
    (moved / Path(RETAIL_POLICY).name).symlink_to(outside)  # leads out of the root
    with pytest.raises(DataPathError, match="escapes the data root"):
        verify(retail_copy, "retail")


def test_verify_checksum_mismatch_reports_both_hashes(retail_copy: Path) -> None:
    policy = retail_copy / RETAIL_POLICY
    policy.write_bytes(policy.read_bytes() + b"\nextra rule\n")
    found = sha256_file(policy)
    with pytest.raises(DataError) as caught:
        verify(retail_copy, "retail")
    message = str(caught.value)
    assert str(policy.resolve()) in message
    assert MANIFEST[RETAIL_POLICY][0] in message and found in message
    assert "--tau2-allow-unpinned-data" in message


def test_allow_unpinned_accepts_mismatch(retail_copy: Path) -> None:
    policy = retail_copy / RETAIL_POLICY
    policy.write_text("our own policy\n")
    pin = verify(retail_copy, "retail", allow_unpinned=True)
    assert pin.pinned is False
    assert pin.files[RETAIL_POLICY] == sha256_file(policy)
    assert pin.files[RETAIL_DB] == MANIFEST[RETAIL_DB][0]
    assert pin.to_dict()["pinned"] is False


def test_allow_unpinned_on_intact_data_is_still_pinned(retail_copy: Path) -> None:
    assert verify(retail_copy, "retail", allow_unpinned=True).pinned is True


def test_allow_unpinned_still_rejects_missing_file(retail_copy: Path) -> None:
    (retail_copy / RETAIL_POLICY).unlink()
    with pytest.raises(DataError, match="missing") as caught:
        verify(retail_copy, "retail", allow_unpinned=True)
    assert "not missing ones" in str(caught.value)


def test_verify_without_root_lists_three_ways() -> None:
    with pytest.raises(DataError) as caught:
        verify(None, "retail")
    message = str(caught.value)
    assert "no tau2 data folder is configured" in message
    assert "--tau2-data-dir" in message
    assert "TAU2_DATA_DIR" in message
    assert "python -m pytest_tau2.data fetch" in message


def test_verify_nonexistent_root(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        verify(tmp_path / "nowhere", "airline")


def test_verify_root_pointing_at_tau2_itself_gets_a_hint(retail_copy: Path) -> None:
    with pytest.raises(DataError, match="has no tau2/ folder"):
        verify(retail_copy / "tau2", "retail")


def test_verify_unknown_domain(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="unknown tau2 domain 'voice'"):
        verify(tmp_path, "voice")


def test_verify_cli_exit_codes(retail_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--data-dir", str(retail_copy), "--domain", "retail"]) == 0
    assert "retail: ok (5 files)" in capsys.readouterr().out
    assert main(["verify", "--data-dir", str(retail_copy), "--domain", "airline"]) == 1
    out = capsys.readouterr().out
    assert "airline: FAILED" in out and "airline/db.json: missing" in out
    assert main(["verify"]) == 1
    assert "none configured" in capsys.readouterr().out


def test_verify_cli_unpinned(retail_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (retail_copy / RETAIL_POLICY).write_text("ours\n")
    assert main(["verify", "--data-dir", str(retail_copy), "--domain", "retail"]) == 1
    capsys.readouterr()
    argv = ["verify", "--data-dir", str(retail_copy), "--domain", "retail", "--allow-unpinned"]
    assert main(argv) == 0
    assert "UNPINNED" in capsys.readouterr().out


# --- data_path ------------------------------------------------------------------------


def test_data_path_inside_root(tmp_path: Path) -> None:
    assert data_path(tmp_path, "tau2/domains/retail/db.json") == tmp_path.resolve() / RETAIL_DB
    # '..' that stays inside the root is fine.
    assert data_path(tmp_path, "tau2/domains/../domains/x.json") == tmp_path.resolve() / "tau2/domains/x.json"


def test_data_path_rejects_parent_escape(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(DataPathError, match="escapes the data root") as caught:
        data_path(root, "tau2/../../secret.txt")
    assert "tau2/../../secret.txt" in str(caught.value) and str(root.resolve()) in str(caught.value)


def test_data_path_rejects_absolute(tmp_path: Path) -> None:
    with pytest.raises(DataPathError, match="escapes the data root") as caught:
        data_path(tmp_path, "/etc/passwd")
    assert "/etc/passwd" in str(caught.value) and str(tmp_path.resolve()) in str(caught.value)


def test_data_path_rejects_symlink_leading_out(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "tau2").mkdir(parents=True)
    outside.mkdir()
    (outside / "db.json").write_text("{}")
    (root / "tau2" / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(DataPathError, match="escapes the data root") as caught:
        data_path(root, "tau2/link/db.json")
    assert str(outside / "db.json") in str(caught.value)


def test_data_path_allows_symlink_within_root(tmp_path: Path) -> None:
    (tmp_path / "tau2" / "real").mkdir(parents=True)
    (tmp_path / "tau2" / "alias").symlink_to(tmp_path / "tau2" / "real", target_is_directory=True)
    assert data_path(tmp_path, "tau2/alias/f.json") == tmp_path.resolve() / "tau2/real/f.json"


def test_data_path_error_is_a_data_error_and_value_error(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        data_path(tmp_path, "..")
    with pytest.raises(ValueError):
        data_path(tmp_path, "..")
