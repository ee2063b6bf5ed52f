"""JUDGE: signals, the verdict combinator, action matching, the NL judge, DB-state predicates."""

from pytest_tau2.scoring import tau2_signal as _tau2_signal  # noqa: F401  (registers the tau2_reward signal)
