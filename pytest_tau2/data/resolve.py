"""Find the tau2 data folder and check it against the pinned manifest.

The data folder ("data root") is the folder that holds ``tau2/domains/...``,
the same meaning upstream tau2 gives to ``TAU2_DATA_DIR``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISLNK, S_ISREG

import platformdirs

from pytest_tau2.data.hash_cache import CACHE_FILE as HASH_CACHE_FILE
from pytest_tau2.data.hash_cache import FileHashes
from pytest_tau2.data.manifest import DOMAIN_FILES, MANIFEST, PIN_COMMIT, PIN_SOURCE
from pytest_tau2.data.parsing import check_syntax
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import DataError, DataPathError

ENV_DATA_DIR = "TAU2_DATA_DIR"
"""Environment variable naming the data root (shared with upstream tau2)."""

ENV_CACHE_DIR = "PYTEST_TAU2_CACHE_DIR"
"""Environment variable replacing the platform's user cache folder."""

CLI_DATA_DIR = "--tau2-data-dir"
CLI_ALLOW_UNPINNED = "--tau2-allow-unpinned-data"
FETCH_COMMAND = "python -m pytest_tau2.data fetch"

_CHUNK_SIZE = 1 << 20  # telecom's tasks.json is 14 MB; never hold a whole file in memory.


def user_cache_dir() -> Path:
    """``$PYTEST_TAU2_CACHE_DIR`` when set, else ``platformdirs.user_cache_dir("pytest-tau2")``."""
    override = os.environ.get(ENV_CACHE_DIR)
    return Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("pytest-tau2"))


def default_cache_dir() -> Path:
    """Return the folder ``fetch`` downloads into by default.

    ``<user cache>/data/<first 12 hex of PIN_COMMIT>`` (:func:`user_cache_dir`).
    The commit is part of the path so a new pin never reuses files of an old one.
    """
    return user_cache_dir() / "data" / PIN_COMMIT[:12]


def resolve_data_dir_with_source(explicit: str | os.PathLike[str] | None) -> tuple[Path | None, str]:
    """Like :func:`resolve_data_dir`, also naming where the answer came from.

    The source is one of ``"explicit"``, ``"env"``, ``"cache"`` or ``"none"``.
    """
    # Empty strings count as unset: an ini key or variable left blank should not mean "cwd".
    if explicit is not None and os.fspath(explicit) != "":
        return Path(explicit).expanduser(), "explicit"
    from_env = os.environ.get(ENV_DATA_DIR)
    if from_env:
        return Path(from_env).expanduser(), "env"
    cache = default_cache_dir()
    if (cache / "tau2").is_dir():
        return cache, "cache"
    return None, "none"


def resolve_data_dir(explicit: str | os.PathLike[str] | None) -> Path | None:
    """Return the data root to use, or None when none is configured.

    Order: ``explicit`` (the ``--tau2-data-dir`` / ini value), then ``$TAU2_DATA_DIR``,
    then :func:`default_cache_dir` if it holds a ``tau2/`` folder. The path is not
    checked here; :func:`verify` does that.
    """
    return resolve_data_dir_with_source(explicit)[0]


@dataclass(frozen=True)
class DataPin:
    """What was verified: which data root, against which pin, with which hashes."""

    root: Path
    commit: str
    source: str
    pinned: bool
    files: dict[str, str]
    """Relative path -> sha256 found on disk (equal to the manifest's when ``pinned``)."""

    def to_dict(self) -> JSONObject:
        """Return the JSON-ready summary written to metrics.json."""
        return {
            "source": self.source,
            "commit": self.commit,
            "pinned": self.pinned,
            "data_dir": str(self.root),
        }


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()


def data_path(root: Path, relative: str | os.PathLike[str]) -> Path:
    """Resolve ``relative`` inside ``root`` and return the resolved path.

    Raises :class:`DataPathError` when the result lies outside ``root``: absolute
    paths, ``..`` segments climbing out, or symlinks pointing elsewhere.
    """
    base = Path(root).resolve()
    rel = Path(relative)
    if rel.anchor:
        # Absolute (or drive-relative) paths would silently discard the root when joined.
        raise DataPathError(
            f"data path {os.fspath(relative)!r} escapes the data root {base}: absolute paths are not "
            f"allowed; give a path relative to the data root, such as 'tau2/domains/retail/db.json'"
        )
    candidate = (base / rel).resolve()
    if not candidate.is_relative_to(base):
        raise DataPathError(
            f"data path {os.fspath(relative)!r} escapes the data root {base}: it resolves to "
            f"{candidate}; use a path inside the data root (no '..' or symlinks leading out of it)"
        )
    return candidate


def _real_file(root: Path, relative: str, real_dirs: dict[str, str]) -> tuple[str, os.stat_result | None]:
    """``data_path(root, relative)`` as a string and its ``os.stat`` (None: nothing there), for
    ``root`` already resolved: each folder's real path is found once (``real_dirs``), then one
    ``lstat`` per file; a symbolic link is resolved in full. 817 files of banking_knowledge
    cost ~0.1 s with one ``realpath`` each (an ``lstat`` per path component), every process."""
    folder, name = os.path.split(relative)
    if os.path.isabs(relative) or name in ("", ".", "..") or os.altsep is not None:
        path = data_path(root, relative)  # the general case and its errors
        try:
            return str(path), os.stat(path)
        except OSError:
            return str(path), None
    real_dir = real_dirs.get(folder)
    if real_dir is None:
        real_dir = real_dirs[folder] = os.path.realpath(os.path.join(root, folder))
    candidate = os.path.join(real_dir, name)
    try:
        stat = os.lstat(candidate)
    except OSError:
        stat = None
    if stat is not None and S_ISLNK(stat.st_mode):
        candidate = os.path.realpath(candidate)
        try:
            stat = os.stat(candidate)
        except OSError:
            stat = None
    base = str(root)
    if candidate != base and not candidate.startswith(base.rstrip(os.sep) + os.sep):
        data_path(root, relative)  # raises DataPathError: outside the data root
    return candidate, stat


_verified: dict[tuple[Path, str, bool], DataPin] = {}
_verified_lock = threading.Lock()


def clear_verify_cache() -> None:
    """Forget every verification done in this process (for tests and long-lived tools)."""
    with _verified_lock:
        _verified.clear()


def verify(root: Path | None, domain: str, *, allow_unpinned: bool = False) -> DataPin:
    """Check that ``root`` holds the pinned files of ``domain``; return the resulting pin.

    Each file in ``DOMAIN_FILES[domain]`` must exist and match the manifest's sha256.
    With ``allow_unpinned`` a checksum mismatch is accepted (the pin then says
    ``pinned=False``); a missing file is always an error. A successful result is
    cached per (root, domain, allow_unpinned), so hashing runs once per process.
    Raises :class:`DataError` explaining what is wrong and how to fix it.
    """
    if root is None:
        raise DataError(_no_data_dir_message())
    if domain not in DOMAIN_FILES:
        known = ", ".join(sorted(DOMAIN_FILES))
        raise DataError(f"unknown tau2 domain {domain!r}: expected one of {known}")
    key = (Path(root).resolve(), domain, allow_unpinned)
    with _verified_lock:
        cached = _verified.get(key)
    if cached is not None:
        return cached
    pin = _verify_uncached(key[0], domain, allow_unpinned)
    with _verified_lock:
        # Another thread may have finished first; keep one object so identity stays stable.
        return _verified.setdefault(key, pin)


def _verify_uncached(root: Path, domain: str, allow_unpinned: bool) -> DataPin:
    """Hash the domain's files under ``root`` and build the pin, or raise DataError."""
    if not root.is_dir():
        raise DataError(_root_not_dir_message(root, domain))
    problems: list[str] = []
    mismatches = 0
    found: dict[str, str] = {}
    hashes = FileHashes(user_cache_dir() / HASH_CACHE_FILE)  # hashed once per file, not per process
    real_dirs: dict[str, str] = {}
    for relative in DOMAIN_FILES[domain]:
        expected_sha, expected_bytes = MANIFEST[relative]
        path, stat = _real_file(root, relative, real_dirs)
        if stat is None or not S_ISREG(stat.st_mode):
            problems.append(f"{path}: missing (expected a file of {expected_bytes} bytes, sha256 {expected_sha})")
            continue
        actual_sha = hashes.sha256(path, sha256_file, real=(path, stat))
        found[relative] = actual_sha
        if actual_sha != expected_sha:
            mismatches += 1
            problems.append(
                f"{path}: sha256 mismatch: expected {expected_sha} ({expected_bytes} bytes), "
                f"found {actual_sha} ({stat.st_size} bytes)"
            )
    hashes.save()
    missing = len(problems) - mismatches
    if missing or (mismatches and not allow_unpinned):
        raise DataError(_mismatch_message(root, domain, problems, allow_unpinned))
    for relative, sha in found.items():
        if sha != MANIFEST[relative][0]:
            # A changed file is accepted, a broken one is not: refused here, once for the
            # domain, rather than as one parse error per scenario that reads it.
            check_syntax(root / relative, f"{CLI_ALLOW_UNPINNED} accepts changed data files, not unparseable ones")
    return DataPin(root=root, commit=PIN_COMMIT, source=PIN_SOURCE, pinned=mismatches == 0, files=found)


def _fix_hints(domain: str, root: Path | None) -> list[str]:
    """Return the ways to get a valid data root, as bullet lines."""
    hints = [
        (
            f"set {ENV_DATA_DIR} or pass {CLI_DATA_DIR} to the folder that holds tau2/domains/... "
            f"(the pinned files of {PIN_SOURCE} at {PIN_COMMIT}, subtree data/)"
        ),
        (
            f"or download them: `{FETCH_COMMAND} --domain {domain}` saves them in {default_cache_dir()}, "
            "which is used when neither of the above is set"
        ),
    ]
    if root is not None:
        hints.append(f"or complete this folder in place: `{FETCH_COMMAND} --domain {domain} --dest {root}`")
    return hints


def _no_data_dir_message() -> str:
    """Explain that no data root is configured and list the three ways to get one."""
    lines = [
        (
            f"no tau2 data folder is configured: {CLI_DATA_DIR} is not given, {ENV_DATA_DIR} is not set, "
            f"and the cache folder {default_cache_dir()} holds no tau2/ folder. Get one of these:"
        ),
        f"  1. pass {CLI_DATA_DIR}=DIR naming the folder that holds tau2/domains/...",
        f"  2. set {ENV_DATA_DIR}=DIR to that folder",
        f"  3. run `{FETCH_COMMAND}` to download the pinned files ({PIN_SOURCE} at {PIN_COMMIT}) into the cache",
    ]
    return "\n".join(lines)


def _root_not_dir_message(root: Path, domain: str) -> str:
    """Explain that the configured data root does not exist."""
    lines = [f"tau2 data folder {root} does not exist or is not a folder (needed for domain {domain!r}). Fix:"]
    lines += [f"  - {hint}" for hint in _fix_hints(domain, None)]
    return "\n".join(lines)


def _mismatch_message(root: Path, domain: str, problems: list[str], allow_unpinned: bool) -> str:
    """Describe missing or mismatching files and how to fix them."""
    lines = [
        (
            f"tau2 data for domain {domain!r} in {root} does not match the pinned data set "
            f"({PIN_SOURCE} at {PIN_COMMIT[:12]}):"
        )
    ]
    lines += [f"  - {problem}" for problem in problems]
    if not (root / "tau2").is_dir():
        lines.append(
            f"  note: {root} has no tau2/ folder; the data folder is the one that holds tau2/domains/..., "
            "not tau2/ itself or a domain folder"
        )
    lines.append("How to fix:")
    lines += [f"  - {hint}" for hint in _fix_hints(domain, root)]
    if allow_unpinned:
        lines.append(f"  - ({CLI_ALLOW_UNPINNED} is set, but it accepts changed files only, not missing ones)")
    else:
        lines.append(
            f"  - if you use a different data set on purpose, pass {CLI_ALLOW_UNPINNED} "
            "(checksum mismatches are then accepted and reported as unpinned; missing files are not)"
        )
    return "\n".join(lines)
