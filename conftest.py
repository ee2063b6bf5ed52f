"""Repository-root conftest: registers this repository's scenarios before collection."""

import scenarios  # noqa: F401  (side-imports every scenario module)
