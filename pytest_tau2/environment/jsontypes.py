"""Static types for the JSON that crosses the package's edges: DB files, tool arguments, payloads.

Three families, one per way a value is used:

- :data:`JSONValue` / :data:`JSONObject`: a JSON document as ``json.loads`` returns it, for values
  read from outside (a DB file, a model's tool arguments, a replay file) and for the dicts we build
  and hand back (tool schemas, results). Being a closed union, it makes the reader narrow
  (``isinstance``) before indexing, which is what untrusted input needs.
- :data:`DBValue`: a DB tree as the domains keep it in memory. Like JSON, plus ``datetime.date``
  (and ``datetime``) leaves: telecom keeps dates as upstream's pydantic models do, and the
  canonical hash prints them with ``default=str``.
- ``object``: where a value is only passed through (hashed, copied, compared, printed), the
  functions take ``object``, which every one of these is.

Types only: nothing here runs at call time, so hot paths (DB copy-on-write, hashing) pay nothing.
"""

from __future__ import annotations

import datetime as dt
from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
"""Any JSON document (``bool`` is an ``int`` to Python; listed for the reader)."""
JSONObject: TypeAlias = dict[str, JSONValue]
"""A JSON object: tool arguments, a schema, a record read from a file."""
JSONArray: TypeAlias = list[JSONValue]

DBValue: TypeAlias = JSONScalar | dt.date | list["DBValue"] | dict[str, "DBValue"]
"""A node of an in-memory DB tree: JSON plus date leaves (``datetime`` is a ``date``)."""
DBObject: TypeAlias = dict[str, DBValue]
"""A DB (or one record of it) with no finer type: the top level of a domain DB is one."""
