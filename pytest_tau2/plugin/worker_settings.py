"""What the xdist controller ships to its workers, and how a worker on another machine reads it.

Workers may run on other machines (``pytest -d --tx socket=HOST:PORT``, ``--tx ssh=...``) with no
shared filesystem. The settings travel in memory (``workerinput``, execnet's channel), never as
a file on the worker. Two settings are paths the controller derived from its own rootdir
(``<rootdir>/data`` for in-repo domains, ``<rootdir>/cassettes``): they travel relative to the
rootdir and each worker anchors them at its own rootdir (the project's copy that reached it by
``--rsyncdir`` or was checked out there). Paths given outside the rootdir travel as they are;
the tau2 data folder is each worker's own (its ``TAU2_DATA_DIR`` or fetch cache) unless
``--tau2-data-dir`` names one for all of them.
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path
from typing import Any

from pytest_tau2.errors import DataError
from pytest_tau2.settings import Settings

ROOT_RELATIVE = ("eval_data_root", "cassette_dir")
RESTART_WAIT_S = 30.0
"""How long the controller waits for a crashed socket worker's server to accept connections
again (a supervised server restarts) before xdist's replacement connects to it."""


def ship(settings: Settings, rootpath: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings as plain values, and the rootdir-relative form of the rootdir-derived paths."""
    relative: dict[str, str] = {}
    for name in ROOT_RELATIVE:
        value = getattr(settings, name)
        if not value:
            continue
        try:
            relative[name] = Path(value).relative_to(rootpath).as_posix()
        except ValueError:
            continue  # outside the rootdir: the same path on every machine
    return settings.to_dict(), relative


def receive(values: dict[str, Any], relative: dict[str, str], rootpath: Path, workers: int = 1) -> Settings:
    """The worker's settings: the controller's, with rootdir-derived paths under this rootdir and
    its share of the provider limits."""
    anchored = {name: str(rootpath / rel) for name, rel in relative.items() if name in ROOT_RELATIVE}
    return Settings.from_dict({**values, **anchored, **limit_shares(values, workers)})


def limit_shares(values: dict[str, Any], workers: int) -> dict[str, Any]:
    """One worker's share of the per-endpoint limits, which the options give for the whole run:
    ``--tau2-max-connections N`` becomes ceil(N / workers) (at least one each), ``--tau2-rpm`` and
    ``--tau2-tpm`` a 1/workers part. Split, not coordinated: a worker's calls then wait for
    nothing from the controller, and each worker's adaptive cap and pace still follow what the
    provider answers it (docs/campaigns.md)."""
    if workers <= 1:
        return {}
    shares: dict[str, Any] = {}
    if values.get("max_connections"):
        shares["max_connections"] = max(1, math.ceil(int(values["max_connections"]) / workers))
    for name in ("rpm", "tpm"):
        if values.get(name):
            shares[name] = float(values[name]) / workers
    return shares


def where(workerid: str) -> str:
    """``xdist worker gw1 on HOST (tau2 data: TAU2_DATA_DIR=...)``: which machine and data an error is about."""
    data = os.environ.get("TAU2_DATA_DIR")
    source = f"TAU2_DATA_DIR={data}" if data else "no TAU2_DATA_DIR"
    return f"xdist worker {workerid} on {socket.gethostname()} (pid {os.getpid()}, {source})"


class WorkerDataError(DataError):
    """The tau2 data on one xdist worker is missing or does not match the pin."""


def on_worker(exc: Exception, workerid: str) -> Exception:
    """A data error raised on a worker, naming the worker; other errors as they are."""
    if isinstance(exc, DataError) and not isinstance(exc, WorkerDataError):
        return WorkerDataError(f"on {where(workerid)}: {exc}")
    return exc


def socket_address(spec: Any) -> tuple[str, int] | None:
    """``(host, port)`` of an execnet ``socket=HOST:PORT`` gateway spec; None for popen, ssh and others."""
    value = getattr(spec, "socket", None)
    if not isinstance(value, str) or ":" not in value:
        return None
    host, _, port = value.rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        return None


def wait_for_address(address: tuple[str, int], timeout: float, interval: float = 0.2) -> bool:
    """Whether an execnet socket server at ``address`` serves a gateway within ``timeout`` seconds.

    A full gateway (opened, then closed) is the test: a bare TCP connect can still land in the
    listening socket of a server that is being killed. The server then loops back to accept the
    connection xdist makes next.
    """
    import execnet

    from pytest_tau2.plugin.compat_execnet import gateway_refusals

    refusals = gateway_refusals()
    deadline = time.monotonic() + timeout
    while True:
        try:
            gateway = execnet.makegateway(f"socket={address[0]}:{address[1]}")
        except refusals:
            if time.monotonic() >= deadline:
                return False
            time.sleep(interval)
        else:
            gateway.exit()
            return True


def after_crash(spec: Any, error: object) -> str | None:
    """What the controller says when a worker went down: for a ``socket=`` worker that crashed,
    after waiting (bounded) for its server to serve gateways again, since xdist replaces the
    worker at once by connecting to the same address and a refused connection ends the run."""
    address = socket_address(spec)
    if error is None or address is None:
        return None
    where = f"{address[0]}:{address[1]}"
    if wait_for_address(address, RESTART_WAIT_S):
        return f"tau2: socket worker {where} is accepting connections again"
    return (
        f"tau2: socket worker {where} is gone ({error}); xdist cannot replace it and will stop the run: "
        "run socket servers under a supervisor that restarts them (docs/many-machines.md)"
    )
