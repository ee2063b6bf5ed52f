"""The knowledge base's documents, read once per process (``documents/*.json``: id, title, content)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    content: str


@functools.cache
def documents(folder: Path) -> tuple[Document, ...]:
    """Every document of the knowledge base, in file-name order (parsed once per process)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found.append(Document(str(data["id"]), str(data["title"]), str(data["content"])))
    return tuple(found)
