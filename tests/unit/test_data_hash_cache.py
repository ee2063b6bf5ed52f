"""The data pin check hashes each data file once, not once per process: a hash is reused while
the file's identity (device, inode, size, modification and change times) is unchanged."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from pytest_tau2.data import hash_cache, resolve
from pytest_tau2.data.hash_cache import CACHE_FILE, FileHashes
from pytest_tau2.data.manifest import DOMAIN_FILES
from pytest_tau2.errors import DataError

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))


def _never(path: Path) -> str:
    raise AssertionError(f"{path} hashed again")


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files here were written a moment ago; the 2 s rule has its own test."""
    monkeypatch.setattr(hash_cache, "RACY_NS", -(10**18))


def test_a_hash_is_reused_by_a_later_process_while_the_file_is_unchanged(tmp_path: Path) -> None:
    data = tmp_path / "db.json"
    data.write_text('{"a": 1}')
    first = FileHashes(tmp_path / "cache" / CACHE_FILE)
    sha = first.sha256(data, resolve.sha256_file)
    first.save()
    assert FileHashes(tmp_path / "cache" / CACHE_FILE).sha256(data, _never) == sha


def test_an_edited_file_is_hashed_again_even_with_its_old_size_and_mtime(tmp_path: Path) -> None:
    data = tmp_path / "db.json"
    data.write_text('{"a": 1}')
    before = data.stat()
    cache = FileHashes(tmp_path / CACHE_FILE)
    old = cache.sha256(data, resolve.sha256_file)
    cache.save()
    time.sleep(0.05)
    data.write_text('{"a": 2}')  # same size
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back; the change time moves on
    if data.stat().st_ctime_ns == before.st_ctime_ns:
        pytest.skip("this filesystem's timestamps are too coarse to show the change")
    new = FileHashes(tmp_path / CACHE_FILE).sha256(data, resolve.sha256_file)
    assert new != old and new == resolve.sha256_file(data)


def test_a_corrupt_or_unwritable_cache_only_costs_the_hashing(tmp_path: Path) -> None:
    data = tmp_path / "db.json"
    data.write_text("{}")
    (tmp_path / CACHE_FILE).write_text("{not json")
    hashes = FileHashes(tmp_path / CACHE_FILE)
    assert hashes.sha256(data, resolve.sha256_file) == resolve.sha256_file(data)
    blocker = tmp_path / "file"
    blocker.write_text("")
    unwritable = FileHashes(blocker / "sub" / CACHE_FILE)  # its folder cannot be made
    unwritable.sha256(data, resolve.sha256_file)
    unwritable.save()  # no error


@pytest.mark.skipif(not (DATA_DIR / "tau2" / "domains").is_dir(), reason="no tau2 data (set TAU2_DATA_DIR)")
def test_verify_still_refuses_a_data_file_edited_after_it_was_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_TAU2_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "data"
    for relative in DOMAIN_FILES["retail"]:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA_DIR / relative, root / relative)
    resolve.clear_verify_cache()
    assert resolve.verify(root, "retail").pinned
    assert (tmp_path / "cache" / CACHE_FILE).is_file()
    resolve.clear_verify_cache()
    monkeypatch.setattr(resolve, "sha256_file", _never)
    assert resolve.verify(root, "retail").pinned  # a new process: every hash from the cache
    monkeypatch.undo()
    monkeypatch.setenv("PYTEST_TAU2_CACHE_DIR", str(tmp_path / "cache"))
    policy = root / "tau2/domains/retail/policy.md"
    policy.write_text(policy.read_text() + "\nAlways refund twice.\n")
    resolve.clear_verify_cache()
    with pytest.raises(DataError, match="sha256 mismatch"):
        resolve.verify(root, "retail")
    resolve.clear_verify_cache()


def test_a_file_changed_in_the_last_two_seconds_is_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hash_cache, "RACY_NS", 2_000_000_000)
    data = tmp_path / "db.json"
    data.write_text('{"a": 1}')  # just now: an edit in the same timestamp tick would keep its identity
    cache = FileHashes(tmp_path / CACHE_FILE)
    cache.sha256(data, resolve.sha256_file)
    assert cache.entries == {} and not cache.changed


def test_paths_that_no_longer_exist_leave_the_cache(tmp_path: Path) -> None:
    kept, gone = tmp_path / "kept.json", tmp_path / "gone.json"
    kept.write_text("{}")
    gone.write_text("[]")
    cache = FileHashes(tmp_path / CACHE_FILE)
    cache.sha256(kept, resolve.sha256_file)
    cache.sha256(gone, resolve.sha256_file)
    gone.unlink()
    cache.save()
    assert list(FileHashes(tmp_path / CACHE_FILE).entries) == [os.path.realpath(kept)]
