"""Static types for the JSON that crosses the package's edges: DB files, tool arguments, payloads.

- :data:`JSONValue` / :data:`JSONObject`: a JSON document as ``json.loads`` returns it, for values
  read from outside (a model's tool arguments, a replay file, a task file) and for the dicts we
  build and hand on (tool schemas, transcripts, actions). Being a closed union, it makes a reader
  narrow (``isinstance``, or ``cast`` where the shape is already checked) before indexing, which is
  what untrusted input needs.
- A domain's DB is typed by the domain itself, with TypedDicts of its records (e.g.
  :class:`pytest_tau2.domains.tau2_retail.db.RetailDB`): those DBs also hold dates (telecom).
- Where a value is only passed through (hashed, copied, compared, printed), functions take
  ``object``, which every value is.

Types only: nothing here runs at call time, so hot paths (DB copy-on-write, hashing) pay nothing.
"""

from __future__ import annotations

from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
"""Any JSON document (``bool`` is an ``int`` to Python; listed for the reader)."""
JSONObject: TypeAlias = dict[str, JSONValue]
"""A JSON object: tool arguments, a schema, a record read from a file."""
