"""The tau2-bench ports: scenarios are generated from the pinned data at collection time.

Override one task by subclassing its domain base and registering it under the same name,
e.g. ``name = "tau2_retail__24"; tau2_id = "24"``: an explicit class wins over the generated one.
"""

from pytest_tau2.domains import tau2_sources  # noqa: F401  (registers the tau2 scenario sources)
