"""How results name a participant that no kind built (a conftest's ``tau2_agent`` or ``tau2_user``
fixture): ``python:<module>.<class>@<version>``.

The version is what the object's ``tau2_version`` attribute says (on the class or set on the
instance by the fixture: a release, a git commit, the model it wraps), else ``sha256:`` and the
first 12 hex digits of the SHA-256 of the class's source (``inspect.getsource``): an edit of
the class is a new agent. A class without readable source (made at run time) is named without
a version. The name goes into metrics.json, the run header's summary and run.json's
fingerprint, so ``--tau2-resume`` and ``pytest-tau2 merge`` refuse results of another agent.
"""

from __future__ import annotations

import hashlib
import inspect

__all__ = ["VERSION_ATTRIBUTE", "python_identity", "same_identity"]

VERSION_ATTRIBUTE = "tau2_version"


def python_identity(participant: object) -> str:
    """``python:<module>.<class>@<version>`` (see the module's docstring)."""
    cls = type(participant)
    name = f"python:{cls.__module__}.{cls.__qualname__}"
    version = getattr(participant, VERSION_ATTRIBUTE, None)
    if version is not None and str(version).strip():
        return f"{name}@{str(version).strip()}"
    digest = _source_digest(cls)
    return f"{name}@sha256:{digest}" if digest else name


_DIGESTS: dict[type, str | None] = {}
"""Class -> its source digest: read once per process (``inspect.getsource`` reads the file)."""


def _source_digest(cls: type) -> str | None:
    if cls not in _DIGESTS:
        try:
            source: str | None = inspect.getsource(cls)
        except (OSError, TypeError):  # defined at run time, or no source file
            source = None
        _DIGESTS[cls] = hashlib.sha256(source.encode("utf-8")).hexdigest()[:12] if source else None
    return _DIGESTS[cls]


def same_identity(saved: str, current: str) -> bool:
    """Whether a saved participant name stands for the current one. A saved Python name without
    a version (written before versions were recorded) matches the same class at any version."""
    if saved == current:
        return True
    return saved.startswith("python:") and "@" not in saved and current.split("@", 1)[0] == saved
