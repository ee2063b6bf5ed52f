"""Download the pinned tau2 data files, checking every byte against the manifest.

Standard library only, so fetching works before any optional dependency is installed.
A file lands at its final path only after its sha256 matched; until then it lives
in a hidden temporary file next to it, removed on any failure.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import os
import secrets
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from pytest_tau2.data.manifest import DOMAIN_FILES, MANIFEST, PIN_COMMIT
from pytest_tau2.data.resolve import sha256_file

ENV_DATA_URL = "TAU2_DATA_URL"
"""Environment variable naming a mirror; it replaces DEFAULT_BASE_URL."""

DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/sierra-research/tau2-bench/{PIN_COMMIT}/data"
"""Upstream's ``data/`` folder at the pinned commit; file URLs are ``{base}/{relative}``."""

_CHUNK_SIZE = 1 << 16
_USER_AGENT = "pytest-tau2-data-fetch"

Status = Literal["ok", "skipped", "failed"]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class FileResult:
    """Outcome of one file: downloaded (``ok``), already valid (``skipped``) or ``failed``."""

    relative: str
    status: Status
    attempts: int
    error: str | None = None
    stops: str | None = None
    """Why no other file can be fetched either (a destination that cannot be written, a server
    that cannot be reached): the fetch stops after this file instead of failing every one alike."""


@dataclass
class FetchReport:
    """Outcome of a :func:`fetch` run."""

    dest: Path
    base_url: str
    results: list[FileResult] = field(default_factory=list)
    stopped: str | None = None
    """Set when the fetch stopped early: why, and how many files it did not try."""

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.failed

    @property
    def failed(self) -> list[FileResult]:
        """The files that could not be obtained."""
        return [r for r in self.results if r.status == "failed"]

    def count(self, status: Status) -> int:
        """Number of files with the given status."""
        return sum(1 for r in self.results if r.status == status)

    def summary(self) -> str:
        """One line: how many files were downloaded, skipped and failed, and where."""
        text = (
            f"{self.count('ok')} downloaded, {self.count('skipped')} already valid, "
            f"{self.count('failed')} failed ({len(self.results)} files in {self.dest})"
        )
        return text + (f"; {self.stopped}" if self.stopped else "")


class _ChecksumMismatch(Exception):
    """The downloaded bytes do not match the manifest (retried: mirrors can serve stale data)."""


class _PermanentHTTPError(Exception):
    """An HTTP status that retrying will not change (404, 403, ...)."""


class _LocalWriteError(Exception):
    """Writing on this machine failed (disk full, permissions): retrying would not help."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        """The operating system's words alone (``Not a directory``), for the line that stops the fetch."""


def resolve_base_url(cli_value: str | None) -> str:
    """Return the base URL to download from: CLI value > ``$TAU2_DATA_URL`` > upstream."""
    chosen = cli_value or os.environ.get(ENV_DATA_URL) or DEFAULT_BASE_URL
    return chosen.rstrip("/")


def files_for_domains(domains: Sequence[str] | None) -> list[str]:
    """Return the manifest paths needed by ``domains`` (every manifest file when None or empty)."""
    if not domains:
        return sorted(MANIFEST)
    unknown = [d for d in domains if d not in DOMAIN_FILES]
    if unknown:
        raise ValueError(f"unknown domain(s) {', '.join(unknown)}: expected one of {', '.join(sorted(DOMAIN_FILES))}")
    # dict keeps first-seen order and drops the guidelines file that several domains share.
    wanted = dict.fromkeys(path for domain in domains for path in DOMAIN_FILES[domain])
    return list(wanted)


def format_size(size: int) -> str:
    """Format a byte count the way progress lines show it (``2.8 MB``)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def format_progress(index: int, total: int, result: FileResult) -> str:
    """Return the progress line for one file, e.g. ``[3/33] tau2/... 2.8 MB ... ok``."""
    size = format_size(MANIFEST[result.relative][1])
    if result.status == "ok":
        outcome = "ok" if result.attempts == 1 else f"ok (after {result.attempts} attempts)"
    elif result.status == "skipped":
        outcome = "skipped (already valid)"
    else:
        outcome = f"FAILED: {result.error}"
    return f"[{index}/{total}] {result.relative} {size} ... {outcome}"


def fetch(
    dest: Path,
    base_url: str,
    files: Iterable[str] | None = None,
    *,
    retries: int = 3,
    timeout: float = 60,
    progress: Progress | None = None,
    backoff: float = 0.5,
) -> FetchReport:
    """Download ``files`` (manifest paths; all of them when None) from ``base_url`` into ``dest``.

    Files already present with the right sha256 are skipped. A checksum mismatch, a
    dropped connection, a timeout or a server error is retried ``retries`` times
    (so ``retries + 1`` attempts) with exponential backoff starting at ``backoff``
    seconds. ``progress`` receives one line per file. Never raises for a failed
    file: look at the report.

    What every other file would meet as well ends the fetch after the file that met it: an
    error writing on this machine (the destination is a file, the disk is full) at once, with no
    retry; a server that cannot be reached (its name does not resolve, nothing listens, no route)
    after that one file's retries. The files not tried are counted as failed, and
    :attr:`FetchReport.stopped` (also the last progress line) says why.
    """
    selected = sorted(MANIFEST) if files is None else list(files)
    unknown = [f for f in selected if f not in MANIFEST]
    if unknown:
        # Without a manifest entry there is no checksum to hold the download to.
        raise ValueError(f"not in the pinned manifest: {', '.join(unknown)}")
    report = FetchReport(dest=Path(dest), base_url=base_url.rstrip("/"))
    for index, relative in enumerate(selected, start=1):
        result = _fetch_one(report.dest, report.base_url, relative, retries, timeout, backoff)
        report.results.append(result)
        if progress is not None:
            progress(format_progress(index, len(selected), result))
        if result.stops is not None:
            rest = selected[index:]
            note = f"not tried: {result.stops}"
            report.results += [FileResult(r, "failed", 0, note) for r in rest]
            report.stopped = f"stopped after {relative}: {result.stops}; {len(rest)} more file(s) not tried"
            if progress is not None:
                progress(report.stopped)
            break
    return report


def _fetch_one(dest: Path, base_url: str, relative: str, retries: int, timeout: float, backoff: float) -> FileResult:
    """Obtain one file, retrying transient failures; never leaves a partial file."""
    target = dest / relative
    if _is_valid(target, relative):
        return FileResult(relative, "skipped", attempts=0)
    url = f"{base_url}/{urllib.parse.quote(relative)}"
    attempts = 0
    while True:
        attempts += 1
        try:
            _download(url, target, relative, timeout)
            return FileResult(relative, "ok", attempts=attempts)
        except _PermanentHTTPError as exc:
            return FileResult(relative, "failed", attempts, f"{exc} ({url})")
        except _LocalWriteError as exc:  # the same for every file: fail at once, and stop
            return FileResult(relative, "failed", attempts, str(exc), stops=f"cannot write into {dest}: {exc.reason}")
        # OSError covers URLError, timeouts, resets and TLS errors; local writes are wrapped above.
        except (_ChecksumMismatch, http.client.HTTPException, OSError) as exc:
            if attempts > retries:
                unreachable = _unreachable(exc)
                stops = f"the server {urllib.parse.urlsplit(url).netloc} {unreachable}" if unreachable else None
                error = f"{_describe(exc)} after {attempts} attempts ({url})"
                return FileResult(relative, "failed", attempts, error, stops=stops)
            time.sleep(backoff * 2 ** (attempts - 1))


def _is_valid(target: Path, relative: str) -> bool:
    """True when ``target`` already holds the pinned bytes (size checked first: it is free)."""
    expected_sha, expected_bytes = MANIFEST[relative]
    try:
        if not target.is_file() or target.stat().st_size != expected_bytes:
            return False
        return sha256_file(target) == expected_sha
    except OSError:
        return False


def _download(url: str, target: Path, relative: str, timeout: float) -> None:
    """Fetch ``url`` into a temporary file beside ``target``, check it, then move it in place."""
    temp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    try:
        with _local(f"cannot create {temp}"):
            target.parent.mkdir(parents=True, exist_ok=True)
            # O_EXCL: never clobber another process's temp file; 0o666 lets the umask decide the mode.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as sink:
            _stream(url, sink, relative, timeout, temp)
        expected_sha = MANIFEST[relative][0]
        actual_sha = sha256_file(temp)
        if actual_sha != expected_sha:
            raise _ChecksumMismatch(f"sha256 mismatch: expected {expected_sha}, got {actual_sha}")
        with _local(f"cannot move the download into {target}"):
            os.replace(temp, target)
    finally:
        # After a successful os.replace the temp name is gone; otherwise drop the partial file.
        # (Under a destination that is a file even that fails: the error that matters is the one above.)
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)


@contextlib.contextmanager
def _local(what: str) -> Iterator[None]:
    """Turn an OSError from a local file operation into a non-retried _LocalWriteError."""
    try:
        yield
    except OSError as exc:
        raise _LocalWriteError(f"{what}: {exc}", exc.strerror or str(exc)) from exc


def _stream(url: str, sink: BinaryIO, relative: str, timeout: float, temp: Path) -> None:
    """Copy the response body into ``sink``, detecting short and oversized bodies."""
    expected_bytes = MANIFEST[relative][1]
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        # 4xx (other than timeout / rate limit) will not change on retry; 5xx might.
        if 400 <= exc.code < 500 and exc.code not in (408, 429):
            raise _PermanentHTTPError(f"HTTP {exc.code} {exc.reason}") from exc
        raise
    except urllib.error.URLError as exc:
        # A file:// mirror lacking the file is the local equivalent of a 404.
        if isinstance(exc.reason, FileNotFoundError):
            raise _PermanentHTTPError(f"not found on the mirror: {exc.reason}") from exc
        raise
    with response:
        announced = _content_length(response.headers.get("Content-Length"))
        received = 0
        while chunk := response.read(_CHUNK_SIZE):
            received += len(chunk)
            if received > expected_bytes:
                # A wrong or hostile mirror must not be able to fill the disk.
                raise _ChecksumMismatch(f"server sent more than the expected {expected_bytes} bytes")
            with _local(f"cannot write {temp}"):
                sink.write(chunk)
    # http.client's read(n) returns b"" when the peer closes early instead of raising,
    # so a dropped connection has to be detected by counting bytes.
    if announced is not None and received < announced:
        raise http.client.IncompleteRead(b"", announced - received)


def _content_length(value: str | None) -> int | None:
    """Parse a Content-Length header, ignoring malformed values."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


_UNREACHABLE_ERRNOS = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN}


def _unreachable(exc: BaseException) -> str | None:
    """How the server cannot be reached at all (so no other file can be fetched either), or None
    for a failure of this one file (a dropped connection, a timeout, a 5xx, a bad checksum)."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, socket.gaierror):
        return f"cannot be resolved ({reason.strerror or reason})"
    if isinstance(reason, OSError) and reason.errno in _UNREACHABLE_ERRNOS:
        return f"cannot be reached ({reason.strerror or reason})"
    return None


def _describe(exc: BaseException) -> str:
    """Short human reason for a retried failure."""
    if isinstance(exc, http.client.IncompleteRead):
        return f"connection dropped ({exc.expected} bytes short of the announced length)"
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"cannot reach server: {exc.reason}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
