"""sha256 of the data files, remembered across processes by file identity.

Every pytest process (each xdist worker too) checks the tau2 data against the pinned manifest
before it collects: hashing the retail, airline and telecom files took ~22 ms per process, on
the way to every run's first model request. A file's hash is kept in the user cache with the
file's device, inode, size, modification and change times; a later process reuses it while all
five are unchanged (the identity test of git's index, make and rsync; on POSIX the change time
moves on any write and cannot be set back by ``touch``; on Windows it is the creation time, and
an edit that keeps the size and restores the modification time would go unseen). As git does
for its index, a file changed in the last 2 s is not remembered (an edit within the same
timestamp tick would keep its identity), nor one whose identity changed while it was hashed.
Any other file is hashed again. The cache only saves time: unreadable, corrupt or unwritable,
it is ignored and the files are hashed.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CACHE_FILE = "file-hashes-v1.json"
RACY_NS = 2_000_000_000
"""A file modified or changed this recently (ns) is hashed every time, never remembered."""


def _identity(stat: os.stat_result) -> list[int]:
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


class FileHashes:
    """The remembered hashes of one cache file; :meth:`save` writes back what changed."""

    def __init__(self, cache: Path | None) -> None:
        self.cache = cache
        self.entries: dict[str, Any] = {}
        self.changed = False
        if cache is not None:
            try:
                loaded = json.loads(cache.read_text("utf-8"))
            except (OSError, ValueError):
                loaded = None
            if isinstance(loaded, dict):
                self.entries = loaded

    def sha256(
        self, path: Path | str, compute: Callable[[Path], str], *, real: tuple[str, os.stat_result] | None = None
    ) -> str:
        """``compute(path)``, or the hash remembered for this very file. ``real``: the caller's
        ``(os.path.realpath(path), os.stat(...))`` when it has them (one system call per file
        instead of one per path component)."""
        if real is not None:
            key, stat = real
        else:
            key = os.path.realpath(path)
            try:
                stat = os.stat(key)
            except OSError:
                return compute(Path(path))  # let the hashing report what is wrong with the file
        identity = _identity(stat)
        entry = self.entries.get(key)
        if isinstance(entry, dict) and entry.get("identity") == identity and isinstance(entry.get("sha256"), str):
            return str(entry["sha256"])
        sha = compute(Path(path))
        try:
            after = os.stat(key)
        except OSError:
            return sha
        settled = time.time_ns() - max(after.st_mtime_ns, after.st_ctime_ns) > RACY_NS
        if settled and _identity(after) == identity:
            self.entries[key] = {"identity": identity, "sha256": sha}
            self.changed = True
        return sha

    def save(self) -> None:
        """Write the cache atomically when something new was hashed; never fails."""
        if self.cache is None or not self.changed:
            return
        try:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            kept = {path: entry for path, entry in self.entries.items() if os.path.exists(path)}  # no stale paths
            fd, tmp = tempfile.mkstemp(prefix=f".{self.cache.name}.", dir=self.cache.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(kept, fh)
                os.replace(tmp, self.cache)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only home: hash again next time
        self.changed = False
