"""The OpenAI wire path's HTTP client (aiohttp) imported on a background thread, once per process.

Its import takes ~0.1 s of CPU; ~60 ms of it build aiohttp's two default TLS contexts in OpenSSL
(reading the CA bundle), only partly outside the GIL (two threads building contexts take 1.6x
as long as one, not 1x). On a thread it overlaps the main thread's file reads and waits; its
CPU still interleaves with the conftest files' under one GIL. Started as early as the run shows
it will call a model (a model given on the command line: plugin/__init__.py, before the conftest
files load; else when the run is configured: run/session.py), so the first request does not
wait for it. A leaf: it imports nothing of pytest-tau2 and aiohttp only on its thread.
"""

from __future__ import annotations

import threading

_thread: threading.Thread | None = None
_lock = threading.Lock()


def start() -> threading.Thread:
    """The import's thread, started by the first call (later calls get the same thread)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_import, name="tau2-preload", daemon=True)
            _thread.start()
        return _thread


def _import() -> None:
    try:
        import aiohttp  # noqa: F401
    except Exception:  # the first call imports it again and reports what is wrong
        pass
