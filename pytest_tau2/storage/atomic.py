"""Atomic file writes whose files get the mode every other file gets: the umask's.

``tempfile.mkstemp`` creates its file 0600, so a file written through it and renamed into place
was private to its writer while the files written directly beside it followed the umask
(metrics.json 0600, transcript.json 0644). Here the temporary file is created by ``os.open``
with mode 0666, which the kernel narrows by the umask exactly as for ``open(path, "w")``; the
umask is never read or changed (changing it would race with other threads).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_text_atomic"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def write_text_atomic(path: Path, text: str, *, errors: str = "strict") -> None:
    """Write ``text`` (UTF-8, ``errors`` as for :func:`open`) to a new file beside ``path``,
    then rename it onto ``path``."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            fd = os.open(tmp, _FLAGS, 0o666)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 100 collisions of 32 random bits
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=errors) as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
