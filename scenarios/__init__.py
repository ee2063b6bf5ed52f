"""Registered evaluation scenarios of this repository.

Importing this package imports every scenario module, so their ``@register_eval_scenario``
decorators run before collection. Copy this pattern into your own repository: a package of
scenario modules, side-imported here, plus a one-line test module (test_scenarios.py).
"""

from scenarios import restaurant, tau2  # noqa: F401  (imported for registration)
