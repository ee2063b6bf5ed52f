"""JUDGE: signals, the verdict combinator, action matching, the NL judge, DB-state predicates."""
