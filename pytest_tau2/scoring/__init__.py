"""JUDGE: signals, the verdict combinator, action matching, the NL judge, DB-state predicates.

Nothing is imported here: :mod:`pytest_tau2.scenario` imports the leaves
:mod:`~pytest_tau2.scoring.names` and :mod:`~pytest_tau2.scoring.rule`, and importing them must
not pull in the signal table, whose records name the scenario they score. The table is read
through :mod:`pytest_tau2.scoring.signals`, which registers every built-in signal.
"""
