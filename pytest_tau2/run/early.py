"""What a pytest start that names a model on its command line begins before the conftest files
load (plugin/__init__.py): the wire path's HTTP client imported on a thread
(llm/wire_import.py). A leaf: the adapter reaches it through run/ without importing the engine."""

from __future__ import annotations


def import_model_client() -> None:
    """Start importing the wire path's HTTP client on its thread (once per process)."""
    from pytest_tau2.llm import wire_import

    wire_import.start()
