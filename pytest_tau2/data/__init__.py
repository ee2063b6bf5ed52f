"""The pinned tau2 data set: where it is, whether it is intact, and how to get it.

``python -m pytest_tau2.data fetch`` downloads it, ``python -m pytest_tau2.data verify``
checks it. The download API lives in :mod:`pytest_tau2.data.fetch` and is not
re-exported here, so importing this package stays free of network modules.
"""

from __future__ import annotations

from pytest_tau2.data.manifest import DOMAIN_FILES, MANIFEST, PIN_COMMIT, PIN_SOURCE
from pytest_tau2.data.resolve import (
    ENV_CACHE_DIR,
    ENV_DATA_DIR,
    DataPin,
    clear_verify_cache,
    data_path,
    default_cache_dir,
    resolve_data_dir,
    verify,
)

__all__ = [
    "DOMAIN_FILES",
    "ENV_CACHE_DIR",
    "ENV_DATA_DIR",
    "MANIFEST",
    "PIN_COMMIT",
    "PIN_SOURCE",
    "DataPin",
    "clear_verify_cache",
    "data_path",
    "default_cache_dir",
    "resolve_data_dir",
    "verify",
]
