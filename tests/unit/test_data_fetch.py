"""Downloading the pinned data from a loopback mirror: checksums, retries, no partial files, CLI."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_tau2.data.__main__ import main
from pytest_tau2.data.fetch import (
    DEFAULT_BASE_URL,
    FetchReport,
    fetch,
    files_for_domains,
    format_size,
    resolve_base_url,
)
from pytest_tau2.data.manifest import DOMAIN_FILES, MANIFEST, PIN_COMMIT
from pytest_tau2.data.resolve import default_cache_dir, resolve_data_dir, sha256_file

REAL_DATA = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
REPO_ROOT = Path(__file__).resolve().parents[2]

POLICY = "tau2/domains/retail/policy.md"
SPLIT = "tau2/domains/retail/split_tasks.json"
AIRLINE_POLICY = "tau2/domains/airline/policy.md"
SMALL = [POLICY, SPLIT, AIRLINE_POLICY]

pytestmark = pytest.mark.skipif(
    not (REAL_DATA / "tau2" / "domains").is_dir(), reason=f"pinned tau2 data not found at {REAL_DATA}"
)


@dataclass
class Mirror:
    """A loopback HTTP server serving ``root`` under ``/data``, with scripted misbehaviour.

    ``plan[relative]`` lists what the next requests for that file get, one entry per
    request ("ok", "corrupt", "drop", "stall", "500"); when it runs out, requests are served normally.
    """

    url: str
    root: Path
    hits: Counter[str] = field(default_factory=Counter)
    plan: dict[str, list[str]] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)

    def next_mode(self, relative: str) -> str:
        steps = self.plan.get(relative)
        return steps.pop(0) if steps else "ok"


def _handler_for(mirror: Mirror) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            prefix = "/data/"
            if not self.path.startswith(prefix):
                self.send_error(404)
                return
            relative = urllib.parse.unquote(self.path[len(prefix) :])
            mirror.hits[relative] += 1
            source = mirror.root / relative
            if not source.is_file():
                self.send_error(404)
                return
            body = source.read_bytes()
            mode = mirror.next_mode(relative)
            if mode == "500":
                self.send_error(500)
                return
            if mode == "corrupt":
                # Same length, one byte different: only the checksum can tell.
                body = bytes([body[0] ^ 0xFF]) + body[1:]
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if mode == "stall":
                mirror.release.wait(5)
            if mode == "drop":
                # Announce the full length, write half, hang up.
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass  # keep test output clean

    return Handler


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    """Serve a copy of the small test files plus the retail domain's files from 127.0.0.1."""
    root = tmp_path / "served"
    for relative in dict.fromkeys([*SMALL, *DOMAIN_FILES["retail"]]):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_DATA / relative, target)
    state = Mirror(url="", root=root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/data"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()  # let stalled handlers finish
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No mirror variable, no data dir, and a private cache for every test."""
    monkeypatch.delenv("TAU2_DATA_URL", raising=False)
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setenv("PYTEST_TAU2_CACHE_DIR", str(tmp_path / "user-cache"))


def _leftovers(folder: Path) -> list[str]:
    """Names of temporary download files left anywhere under ``folder``."""
    return [p.name for p in folder.rglob("*.part")] if folder.exists() else []


def _run(
    dest: Path,
    url: str,
    files: list[str],
    lines: list[str] | None = None,
    *,
    retries: int = 3,
    timeout: float = 10,
) -> FetchReport:
    """fetch() without backoff delays, collecting progress lines into ``lines``."""
    progress = None if lines is None else lines.append
    return fetch(dest, url, files, retries=retries, timeout=timeout, progress=progress, backoff=0)


# --- success and skipping -------------------------------------------------------------


def test_fetch_downloads_and_verifies(mirror: Mirror, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    lines: list[str] = []
    report = _run(dest, mirror.url, SMALL, lines)
    assert report.ok and report.count("ok") == 3
    for relative in SMALL:
        assert sha256_file(dest / relative) == MANIFEST[relative][0]
        assert mirror.hits[relative] == 1
    assert lines[0] == f"[1/3] {POLICY} 6.7 kB ... ok"
    assert [line.split("]")[0] for line in lines] == ["[1/3", "[2/3", "[3/3"]
    assert _leftovers(dest) == []
    assert report.summary().startswith("3 downloaded, 0 already valid, 0 failed")


def test_second_run_skips_valid_files(mirror: Mirror, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    assert _run(dest, mirror.url, SMALL).ok
    lines: list[str] = []
    again = _run(dest, mirror.url, SMALL, lines)
    assert again.count("skipped") == 3 and again.ok
    assert all(count == 1 for count in mirror.hits.values())  # nothing requested twice
    assert all(line.endswith("skipped (already valid)") for line in lines)


def test_damaged_local_file_is_replaced(mirror: Mirror, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    (dest / POLICY).parent.mkdir(parents=True)
    (dest / POLICY).write_text("stale local copy\n")
    report = _run(dest, mirror.url, [POLICY])
    assert [r.status for r in report.results] == ["ok"]
    assert sha256_file(dest / POLICY) == MANIFEST[POLICY][0]


# --- corrupted bytes ------------------------------------------------------------------


def test_corrupted_file_is_retried_then_failed_without_leftovers(mirror: Mirror, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    mirror.plan[POLICY] = ["corrupt"] * 10
    lines: list[str] = []
    report = _run(dest, mirror.url, [POLICY, SPLIT], lines, retries=2)
    assert not report.ok
    [failed] = report.failed
    assert failed.relative == POLICY and failed.attempts == 3
    assert mirror.hits[POLICY] == 3  # first try + 2 retries
    assert "sha256 mismatch" in (failed.error or "")
    assert not (dest / POLICY).exists()
    assert _leftovers(dest) == []
    assert lines[0].startswith(f"[1/2] {POLICY} 6.7 kB ... FAILED: sha256 mismatch")
    # The other file is unaffected.
    assert sha256_file(dest / SPLIT) == MANIFEST[SPLIT][0]


def test_corruption_once_then_good(mirror: Mirror, tmp_path: Path) -> None:
    mirror.plan[POLICY] = ["corrupt"]
    report = _run(tmp_path / "dest", mirror.url, [POLICY])
    assert report.ok and report.results[0].attempts == 2
    assert mirror.hits[POLICY] == 2


# --- dropped connections, timeouts, server errors -------------------------------------


def test_dropped_connection_is_retried_and_succeeds(mirror: Mirror, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    mirror.plan[SPLIT] = ["drop"]
    lines: list[str] = []
    report = _run(dest, mirror.url, [SPLIT], lines)
    assert report.ok
    assert mirror.hits[SPLIT] == 2
    assert lines == [f"[1/1] {SPLIT} 3.3 kB ... ok (after 2 attempts)"]
    assert sha256_file(dest / SPLIT) == MANIFEST[SPLIT][0]
    assert _leftovers(dest) == []


def test_connection_always_dropped_fails_without_partial_file(mirror: Mirror, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    mirror.plan[SPLIT] = ["drop"] * 10
    report = _run(dest, mirror.url, [SPLIT], retries=1)
    [failed] = report.failed
    assert "connection dropped" in (failed.error or "") and failed.attempts == 2
    assert not (dest / SPLIT).exists()
    assert _leftovers(dest) == []


def test_read_timeout_is_retried(mirror: Mirror, tmp_path: Path) -> None:
    mirror.plan[POLICY] = ["stall"]
    report = _run(tmp_path / "dest", mirror.url, [POLICY], timeout=0.3)
    assert report.ok and report.results[0].attempts == 2


def test_server_error_is_retried(mirror: Mirror, tmp_path: Path) -> None:
    mirror.plan[POLICY] = ["500"]
    report = _run(tmp_path / "dest", mirror.url, [POLICY])
    assert report.ok and mirror.hits[POLICY] == 2


def test_not_found_is_not_retried(mirror: Mirror, tmp_path: Path) -> None:
    (mirror.root / POLICY).unlink()
    report = _run(tmp_path / "dest", mirror.url, [POLICY], retries=3)
    [failed] = report.failed
    assert failed.attempts == 1 and mirror.hits[POLICY] == 1
    assert "HTTP 404" in (failed.error or "")


def test_unreachable_server_fails_after_retries(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = _run(tmp_path / "dest", f"http://127.0.0.1:{port}/data", [POLICY], retries=1)
    [failed] = report.failed
    assert failed.attempts == 2 and "cannot reach server" in (failed.error or "")


def test_file_url_mirror_works_offline(tmp_path: Path) -> None:
    # An air-gapped mirror can be a plain folder: TAU2_DATA_URL=file:///path/to/data.
    served = tmp_path / "served"
    (served / POLICY).parent.mkdir(parents=True)
    shutil.copyfile(REAL_DATA / POLICY, served / POLICY)
    report = _run(tmp_path / "dest", served.as_uri(), [POLICY, SPLIT])
    assert [r.status for r in report.results] == ["ok", "failed"]
    assert report.results[1].attempts == 1  # a missing file on a file:// mirror is not retried
    assert sha256_file(tmp_path / "dest" / POLICY) == MANIFEST[POLICY][0]


def test_fetch_rejects_files_outside_manifest(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not in the pinned manifest"):
        fetch(tmp_path, "http://127.0.0.1:9/data", ["tau2/../etc/passwd"])


# --- helpers ------------------------------------------------------------------------


def test_base_url_order(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_base_url(None) == DEFAULT_BASE_URL
    assert PIN_COMMIT in DEFAULT_BASE_URL and DEFAULT_BASE_URL.endswith("/data")
    monkeypatch.setenv("TAU2_DATA_URL", "http://mirror.example/tau2/")
    assert resolve_base_url(None) == "http://mirror.example/tau2"
    assert resolve_base_url("http://cli.example/d") == "http://cli.example/d"


def test_files_for_domains() -> None:
    assert files_for_domains(None) == sorted(MANIFEST)
    assert files_for_domains(["retail"]) == list(DOMAIN_FILES["retail"])
    both = files_for_domains(["retail", "airline"])
    assert len(both) == 9 and len(set(both)) == 9  # shared guidelines listed once
    with pytest.raises(ValueError, match="unknown domain"):
        files_for_domains(["voice"])
    banking = files_for_domains(["banking_knowledge"])
    assert len([f for f in banking if f.startswith("tau2/domains/banking_knowledge/")]) == 815


def test_format_size() -> None:
    assert format_size(281) == "281 B"
    assert format_size(6699) == "6.7 kB"
    assert format_size(2811616) == "2.8 MB"


# --- command line -------------------------------------------------------------------


def test_cli_uses_tau2_data_url(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TAU2_DATA_URL", mirror.url)
    dest = tmp_path / "dest"
    assert main(["fetch", "--dest", str(dest), "--domain", "retail"]) == 0
    err = capsys.readouterr().err
    assert f"from {mirror.url} into {dest}" in err
    assert "[1/5] tau2/domains/retail/db.json 2.8 MB ... ok" in err
    assert "done: 5 downloaded, 0 already valid, 0 failed" in err
    assert set(mirror.hits) == set(DOMAIN_FILES["retail"])


def test_cli_base_url_beats_env(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TAU2_DATA_URL", "http://127.0.0.1:9/nowhere")
    argv = ["fetch", "--dest", str(tmp_path / "d"), "--domain", "retail", "--base-url", mirror.url, "--quiet"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "[1/5]" not in err  # --quiet: no per-file lines when all is well
    assert "done: 5 downloaded" in err


def test_cli_exit_code_1_on_failure(mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mirror.root / POLICY).unlink()  # 404: fails fast, no retry delay
    argv = ["fetch", "--dest", str(tmp_path / "d"), "--domain", "retail", "--base-url", mirror.url, "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"{POLICY} 6.7 kB ... FAILED: HTTP 404" in err
    assert "FAILED: 4 downloaded, 0 already valid, 1 failed" in err


def test_cli_default_dest_is_the_cache_that_resolution_finds(
    mirror: Mirror, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fetch", "--domain", "retail", "--base-url", mirror.url]) == 0
    assert resolve_data_dir(None) == default_cache_dir()
    assert sha256_file(default_cache_dir() / POLICY) == MANIFEST[POLICY][0]
    assert main(["verify", "--domain", "retail"]) == 0
    assert "retail: ok" in capsys.readouterr().out


def test_module_entry_point_in_subprocess(mirror: Mirror, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TAU2_DATA_URL": mirror.url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    dest = tmp_path / "d"
    command = [sys.executable, "-m", "pytest_tau2.data", "fetch", "--dest", str(dest), "--domain", "retail"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "done: 5 downloaded" in done.stderr
    assert done.stdout == ""  # progress goes to stderr only
    bad = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.data", "fetch", "--domain", "nope"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_cli_fetches_exactly_the_pinned_banking_files_and_they_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fetch --domain banking_knowledge``: its 815 pinned files (file names with parentheses and
    spaces quoted in the URL) plus the two user-simulator guidelines, each checked against the pin."""
    from pytest_tau2.data.resolve import verify

    served = tmp_path / "served"
    wanted = DOMAIN_FILES["banking_knowledge"]
    assert len([f for f in wanted if f.startswith("tau2/domains/banking_knowledge/")]) == 815
    state = Mirror(url="", root=served)
    for relative in wanted:
        (served / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_DATA / relative, served / relative)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/data"
        dest = tmp_path / "dest"
        assert main(["fetch", "--dest", str(dest), "--domain", "banking_knowledge", "--base-url", url, "--quiet"]) == 0
    finally:
        server.shutdown()
        server.server_close()
    assert f"done: {len(wanted)} downloaded, 0 already valid, 0 failed" in capsys.readouterr().err
    assert sorted(state.hits) == sorted(wanted)
    assert verify(dest, "banking_knowledge").pinned is True
