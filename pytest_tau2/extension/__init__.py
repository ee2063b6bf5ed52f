"""EXTENSION: how every extension point of pytest-tau2 registers, in one style.

Signals, participant kinds, LLM transports, DB-state predicates, scenario sources (domains) and
report views are each a :class:`~pytest_tau2.extension.registry.Registry`: ``register`` adds an
entry under its key (a second, different entry under the same key is refused, naming both,
unless ``replace=True``), ``unregister`` removes one, and reads go through the registry as a
mapping. The ``register_*`` functions exported from :mod:`pytest_tau2` are thin front doors to
these registries.

A user's package adds extensions through one entry-point group, ``pytest_tau2``: each entry
point names a module (imported: its ``register_*`` calls and decorators run) or a function
(called with no arguments). They are loaded once per process, the first time any registry is
read. See docs/architecture.md ("Extension points").
"""

from pytest_tau2.extension.registry import ENTRY_POINT_GROUP, Registry, load_entry_points

__all__ = ["ENTRY_POINT_GROUP", "Registry", "load_entry_points"]
